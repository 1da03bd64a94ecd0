import CZeroMQ

/// One received multipart message, read where libzmq put it: the frames are not copied into arrays,
/// and stay valid until the next receive into the same holder or ``release()``. Made once and reused
/// by the thread that owns the socket.
///
/// It holds up to `capacity` frames; the frames of a longer message past those are received and
/// dropped, and ``count`` still says how many the message had.
public final class ZMQMultipart {
    private let parts: UnsafeMutablePointer<zmq_msg_t>
    /// The most frames held; ``subscript(_:)`` reads frames below it.
    public let capacity: Int
    /// Receives the frames past the capacity, each dropped at once.
    private let spare: UnsafeMutablePointer<zmq_msg_t> = .allocate(capacity: 1)
    /// Frames held (at most the capacity).
    private var held = 0
    /// How many frames the last message received had (0 after ``release()``).
    public private(set) var count = 0

    /// A holder of up to `capacity` frames (at least 1).
    public init(capacity: Int = 8) {
        self.capacity = max(1, capacity)
        parts = .allocate(capacity: self.capacity)
    }

    deinit {
        release()
        parts.deallocate()
        spare.deallocate()
    }

    /// Closes the frames held; ``count`` is 0 afterwards.
    public func release() {
        for index in 0..<held { zmq_msg_close(parts + index) }
        held = 0
        count = 0
    }

    /// The bytes of frame `index`, which must be below ``count`` and the capacity; valid until the next
    /// receive or ``release()``.
    public subscript(index: Int) -> UnsafeRawBufferPointer {
        precondition(index >= 0 && index < held, "frame \(index) of a \(held)-frame message")
        let part = parts + index
        return UnsafeRawBufferPointer(start: zmq_msg_data(part), count: zmq_msg_size(part))
    }

    /// Receives one whole message from `handle` into the holder (after releasing what it held).
    /// False when `dontWait` is set and nothing is queued.
    func receive(from handle: UnsafeMutableRawPointer, dontWait: Bool, type: SocketType) throws -> Bool {
        release()
        while true {
            let keep = held < capacity
            let part = keep ? parts + held : spare
            zmq_msg_init(part)
            let flags: Int32 = (dontWait && count == 0) ? ZMQ_DONTWAIT : 0
            if zmq_msg_recv(part, handle, flags) < 0 {
                let code = zmq_errno()
                zmq_msg_close(part)
                if code == EINTR { continue }
                if code == EAGAIN && count == 0 { return false }
                release()
                throw ZeroMQError(code: code, operation: "zmq_msg_recv(\(type))")
            }
            count += 1
            let more = zmq_msg_more(part) != 0
            if keep { held += 1 } else { zmq_msg_close(part) }
            if !more { return true }
        }
    }
}

extension ZMQSocket {
    /// Receives a whole multipart message into `message`, in place (see ``ZMQMultipart``); false when
    /// `dontWait` is set and nothing is queued.
    public func receive(into message: ZMQMultipart, dontWait: Bool = false) throws -> Bool {
        guard let handle = rawHandle else {
            throw ZeroMQError(code: ENOTSOCK, operation: "zmq_msg_recv(\(type))")
        }
        return try message.receive(from: handle, dontWait: dontWait, type: type)
    }
}
