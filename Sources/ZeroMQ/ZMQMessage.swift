import CZeroMQ

/// One frame held in a libzmq `zmq_msg_t`, closed exactly once when the value is released.
///
/// Sending a message hands its content to libzmq; the message is then empty (and still closed once).
public final class ZMQMessage {
    let pointer: UnsafeMutablePointer<zmq_msg_t>

    /// An empty frame, ready to receive into.
    public init() {
        pointer = .allocate(capacity: 1)
        zmq_msg_init(pointer)
    }

    /// A frame holding a copy of `bytes`.
    public init(bytes: UnsafeRawBufferPointer) throws {
        pointer = .allocate(capacity: 1)
        guard zmq_msg_init_size(pointer, bytes.count) == 0 else {
            let error = ZeroMQError.last("zmq_msg_init_size(\(bytes.count))")
            pointer.deallocate()
            throw error
        }
        if let base = bytes.baseAddress, bytes.count > 0 {
            zmq_msg_data(pointer).copyMemory(from: base, byteCount: bytes.count)
        }
    }

    /// A frame holding a copy of `bytes`.
    public convenience init(_ bytes: [UInt8]) throws {
        try self.init(bytes: bytes.withUnsafeBytes { $0 })
    }

    deinit {
        zmq_msg_close(pointer)
        pointer.deallocate()
    }

    /// The number of bytes in the frame.
    public var count: Int { zmq_msg_size(pointer) }

    /// True when more frames of the same multipart message follow this one.
    public var hasMore: Bool { zmq_msg_more(pointer) != 0 }

    /// Calls `body` with the frame's bytes; the pointer must not escape the closure.
    public func withUnsafeBytes<Result>(_ body: (UnsafeRawBufferPointer) throws -> Result) rethrows -> Result
    {
        try body(UnsafeRawBufferPointer(start: zmq_msg_data(pointer), count: zmq_msg_size(pointer)))
    }

    /// A copy of the frame's bytes.
    public var bytes: [UInt8] { withUnsafeBytes { [UInt8]($0) } }
}
