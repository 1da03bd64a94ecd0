import CZeroMQ

/// A libzmq context: the owner of the I/O threads that every socket of a process shares.
///
/// A context is thread-safe. Each ``ZMQSocket`` keeps its context alive, so the context is terminated
/// only after the last socket made from it has been closed.
public final class ZMQContext: @unchecked Sendable {
    let handle: UnsafeMutableRawPointer

    /// One context for the whole process, created on first use and never terminated.
    public static let shared: ZMQContext = {
        do { return try ZMQContext() } catch { fatalError("cannot create the ZeroMQ context: \(error)") }
    }()

    /// Creates a context with `ioThreads` libzmq I/O threads.
    public init(ioThreads: Int32 = 1) throws {
        guard let handle = zmq_ctx_new() else { throw ZeroMQError.last("zmq_ctx_new") }
        self.handle = handle
        if ioThreads != 1, zmq_ctx_set(handle, ZMQ_IO_THREADS, ioThreads) != 0 {
            let error = ZeroMQError.last("zmq_ctx_set(ZMQ_IO_THREADS)")
            zmq_ctx_term(handle)
            throw error
        }
    }

    deinit {
        while zmq_ctx_term(handle) != 0 && zmq_errno() == EINTR {}
    }

    /// The version of the libzmq library loaded at run time, e.g. `4.3.4`.
    public static var libraryVersion: String {
        var major: Int32 = 0
        var minor: Int32 = 0
        var patch: Int32 = 0
        zmq_version(&major, &minor, &patch)
        return "\(major).\(minor).\(patch)"
    }
}
