import CZeroMQ

/// A libzmq socket, used by one thread at a time.
///
/// The type is deliberately not `Sendable`: create a socket on the thread that owns it. Blocking calls
/// retry on `EINTR`; a call that would block in non-blocking mode returns `nil` or `false`.
/// New sockets linger 0 ms on close; set ``IntegerOption/linger`` before closing to flush.
public final class ZMQSocket {
    /// The kind of socket.
    public let type: SocketType
    private let context: ZMQContext
    private var handle: UnsafeMutableRawPointer?
    private let scratch: UnsafeMutablePointer<zmq_msg_t> = .allocate(capacity: 1)

    /// Creates a socket of `type` in `context`.
    public init(_ context: ZMQContext, type: SocketType) throws {
        guard let handle = zmq_socket(context.handle, type.rawValue) else {
            scratch.deallocate()
            throw ZeroMQError.last("zmq_socket(\(type))")
        }
        self.context = context
        self.type = type
        self.handle = handle
        try set(.linger, 0)
    }

    deinit {
        close()
        scratch.deallocate()
    }

    /// Closes the socket; further calls fail with `ENOTSOCK`. Closing twice is harmless.
    public func close() {
        guard let handle else { return }
        zmq_close(handle)
        self.handle = nil
    }

    /// True until ``close()``.
    public var isOpen: Bool { handle != nil }

    var rawHandle: UnsafeMutableRawPointer? { handle }

    private func live(_ operation: @autoclosure () -> String) throws -> UnsafeMutableRawPointer {
        guard let handle else { throw ZeroMQError(code: ENOTSOCK, operation: operation()) }
        return handle
    }

    // MARK: Endpoints

    /// Binds to `endpoint`, e.g. `tcp://127.0.0.1:*` or `ipc:///tmp/x`. `tcp://localhost:…` binds
    /// 127.0.0.1 (libzmq reads a bind's host as an interface or an address, not a name), and an
    /// IPv6 address in brackets (`tcp://[::1]:…`) turns IPv6 on for the socket.
    public func bind(_ endpoint: String) throws {
        let handle = try live("zmq_bind(\(endpoint))")
        let target = Self.bindable(endpoint)
        if Self.isIPv6(target) { try set(.ipv6, 1) }
        guard zmq_bind(handle, target) == 0 else { throw ZeroMQError.last("zmq_bind(\(endpoint))") }
    }

    /// Connects to `endpoint`; libzmq completes the connection (and reconnects) in the background.
    /// An IPv6 address in brackets turns IPv6 on for the socket.
    public func connect(_ endpoint: String) throws {
        let handle = try live("zmq_connect(\(endpoint))")
        if Self.isIPv6(endpoint) { try set(.ipv6, 1) }
        guard zmq_connect(handle, endpoint) == 0 else { throw ZeroMQError.last("zmq_connect(\(endpoint))") }
    }

    /// `endpoint` with the host `localhost` of a TCP endpoint written as 127.0.0.1.
    static func bindable(_ endpoint: String) -> String {
        let prefix = "tcp://localhost:"
        guard endpoint.hasPrefix(prefix) else { return endpoint }
        return "tcp://127.0.0.1:" + endpoint.dropFirst(prefix.count)
    }

    /// True for a TCP endpoint whose host is an IPv6 address in brackets.
    static func isIPv6(_ endpoint: String) -> Bool { endpoint.hasPrefix("tcp://[") }

    /// Stops listening on `endpoint`.
    public func unbind(_ endpoint: String) throws {
        let handle = try live("zmq_unbind(\(endpoint))")
        guard zmq_unbind(handle, endpoint) == 0 else { throw ZeroMQError.last("zmq_unbind(\(endpoint))") }
    }

    /// Drops the connection to `endpoint`.
    public func disconnect(_ endpoint: String) throws {
        let handle = try live("zmq_disconnect(\(endpoint))")
        guard zmq_disconnect(handle, endpoint) == 0 else {
            throw ZeroMQError.last("zmq_disconnect(\(endpoint))")
        }
    }

    /// `ZMQ_EVENT_ACCEPTED`, for ``monitor(_:events:)``: a listener accepted a connection (the value
    /// is its descriptor).
    public static let acceptedEvent = Int32(ZMQ_EVENT_ACCEPTED)
    /// `ZMQ_EVENT_CONNECTED`, for ``monitor(_:events:)``: a connect reached its peer.
    public static let connectedEvent = Int32(ZMQ_EVENT_CONNECTED)
    /// `ZMQ_EVENT_CONNECT_RETRIED`, for ``monitor(_:events:)``: a connect attempt failed (refused,
    /// unreachable) and will be tried again.
    public static let connectRetriedEvent = Int32(ZMQ_EVENT_CONNECT_RETRIED)
    /// `ZMQ_EVENT_DISCONNECTED`, for ``monitor(_:events:)``: the connection to a peer was lost.
    public static let disconnectedEvent = Int32(ZMQ_EVENT_DISCONNECTED)
    /// `ZMQ_EVENT_HANDSHAKE_SUCCEEDED`, for ``monitor(_:events:)``: a connection is ready to carry messages.
    public static let handshakeSucceededEvent = Int32(ZMQ_EVENT_HANDSHAKE_SUCCEEDED)
    /// `ZMQ_EVENT_HANDSHAKE_FAILED_AUTH`, for ``monitor(_:events:)``: the peer refused this socket's
    /// credentials (a ZAP handler said no).
    public static let handshakeFailedAuthEvent = Int32(ZMQ_EVENT_HANDSHAKE_FAILED_AUTH)
    /// `ZMQ_EVENT_HANDSHAKE_FAILED_PROTOCOL`, for ``monitor(_:events:)``: the two sides broke the
    /// handshake's protocol (different security mechanisms, say).
    public static let handshakeFailedProtocolEvent = Int32(ZMQ_EVENT_HANDSHAKE_FAILED_PROTOCOL)
    /// `ZMQ_EVENT_HANDSHAKE_FAILED_NO_DETAIL`, for ``monitor(_:events:)``: a handshake failed otherwise.
    public static let handshakeFailedEvent = Int32(ZMQ_EVENT_HANDSHAKE_FAILED_NO_DETAIL)

    /// The event number of a monitor message's first frame.
    public static func monitorEvent(_ frame: [UInt8]) -> Int32 {
        frame.count < 2 ? 0 : Int32(frame[0]) | Int32(frame[1]) << 8
    }

    /// Publishes this socket's connection events (`ZMQ_EVENT_*`, e.g. `ZMQ_EVENT_DISCONNECTED`) on
    /// the inproc `endpoint`, for a PAIR socket to read: each event is two frames, the event number
    /// (16 bits) and value (32 bits), then the peer's address.
    /// - Throws: ``ZeroMQError`` when libzmq refuses (a bad endpoint, a closed socket).
    public func monitor(_ endpoint: String, events: Int32) throws {
        let handle = try live("zmq_socket_monitor(\(endpoint))")
        guard zmq_socket_monitor(handle, endpoint, events) == 0 else {
            throw ZeroMQError.last("zmq_socket_monitor(\(endpoint))")
        }
    }

    /// Stops ``monitor(_:events:)``: no event is sent from now on. Call it before the reading PAIR
    /// closes and before this socket closes: libzmq's I/O thread sends each event blocking, so an
    /// event for a monitor nobody reads any more (a closed socket still lingers and reconnects)
    /// would stop every socket of the context.
    public func stopMonitor() {
        guard let handle = try? live("zmq_socket_monitor(NULL)") else { return }
        _ = zmq_socket_monitor(handle, nil, 0)
    }

    /// The endpoint of the last bind or connect, with wildcard ports resolved.
    public func lastEndpoint() throws -> String {
        var bytes = try get(.lastEndpoint)
        while bytes.last == 0 { bytes.removeLast() }
        return String(decoding: bytes, as: UTF8.self)
    }

    // MARK: Options

    /// Sets an integer option.
    public func set(_ option: IntegerOption, _ value: Int) throws {
        let handle = try live("zmq_setsockopt(\(option.name))")
        let status: Int32
        if option.isWide {
            var wide = Int64(value)
            status = zmq_setsockopt(handle, option.name, &wide, MemoryLayout<Int64>.size)
        } else {
            var narrow = Int32(truncatingIfNeeded: value)
            status = zmq_setsockopt(handle, option.name, &narrow, MemoryLayout<Int32>.size)
        }
        guard status == 0 else { throw ZeroMQError.last("zmq_setsockopt(\(option.name), \(value))") }
    }

    /// Reads an integer option.
    public func get(_ option: IntegerOption) throws -> Int {
        let handle = try live("zmq_getsockopt(\(option.name))")
        if option.isWide {
            var wide: Int64 = 0
            var size = MemoryLayout<Int64>.size
            guard zmq_getsockopt(handle, option.name, &wide, &size) == 0 else {
                throw ZeroMQError.last("zmq_getsockopt(\(option.name))")
            }
            return Int(wide)
        }
        var narrow: Int32 = 0
        var size = MemoryLayout<Int32>.size
        guard zmq_getsockopt(handle, option.name, &narrow, &size) == 0 else {
            throw ZeroMQError.last("zmq_getsockopt(\(option.name))")
        }
        return Int(narrow)
    }

    /// Sets a byte-string option (subscriptions, routing id, welcome message).
    public func set(_ option: BytesOption, _ value: [UInt8]) throws {
        let handle = try live("zmq_setsockopt(\(option.name))")
        let status = value.withUnsafeBytes { zmq_setsockopt(handle, option.name, $0.baseAddress, $0.count) }
        guard status == 0 else { throw ZeroMQError.last("zmq_setsockopt(\(option.name))") }
    }

    /// Sets a byte-string option from the UTF-8 bytes of `value`.
    public func set(_ option: BytesOption, _ value: String) throws {
        try set(option, Array(value.utf8))
    }

    /// Reads a byte-string option (at most 1 KiB).
    public func get(_ option: BytesOption) throws -> [UInt8] {
        let handle = try live("zmq_getsockopt(\(option.name))")
        var buffer = [UInt8](repeating: 0, count: 1024)
        var size = buffer.count
        let status = buffer.withUnsafeMutableBytes {
            zmq_getsockopt(handle, option.name, $0.baseAddress, &size)
        }
        guard status == 0 else { throw ZeroMQError.last("zmq_getsockopt(\(option.name))") }
        return Array(buffer.prefix(size))
    }

    // MARK: Sending

    /// Sends one frame; `more` marks further frames of the same message.
    /// Returns false when `dontWait` is set and the frame cannot be queued now.
    @discardableResult
    public func send(_ bytes: UnsafeRawBufferPointer, more: Bool = false, dontWait: Bool = false) throws
        -> Bool
    {
        let handle = try live("zmq_send")
        var flags: Int32 = 0
        if more { flags |= ZMQ_SNDMORE }
        if dontWait { flags |= ZMQ_DONTWAIT }
        let start = bytes.baseAddress ?? UnsafeRawPointer(scratch)
        while zmq_send(handle, start, bytes.count, flags) < 0 {
            let code = zmq_errno()
            if code == EINTR { continue }
            if code == EAGAIN { return false }
            throw ZeroMQError(code: code, operation: "zmq_send(\(type), \(bytes.count) bytes)")
        }
        return true
    }

    /// Sends one frame held in a ``ZMQMessage`` without copying; the message is empty afterwards.
    @discardableResult
    public func send(_ message: ZMQMessage, more: Bool = false, dontWait: Bool = false) throws -> Bool {
        let handle = try live("zmq_msg_send")
        var flags: Int32 = 0
        if more { flags |= ZMQ_SNDMORE }
        if dontWait { flags |= ZMQ_DONTWAIT }
        while zmq_msg_send(message.pointer, handle, flags) < 0 {
            let code = zmq_errno()
            if code == EINTR { continue }
            if code == EAGAIN { return false }
            throw ZeroMQError(code: code, operation: "zmq_msg_send(\(type))")
        }
        return true
    }

    /// Sends a multipart message. libzmq queues a multipart message whole or not at all, so with
    /// `dontWait` a false result means nothing was sent.
    @discardableResult
    public func send(frames: [[UInt8]], dontWait: Bool = false) throws -> Bool {
        precondition(!frames.isEmpty, "a message has at least one frame")
        for index in frames.indices {
            let more = index < frames.count - 1
            let sent = try frames[index].withUnsafeBytes {
                try send($0, more: more, dontWait: dontWait && index == 0)
            }
            if !sent { return false }
        }
        return true
    }

    // MARK: Receiving

    /// Receives one frame into a ``ZMQMessage``, or nil when `dontWait` is set and nothing is queued.
    public func receiveMessage(dontWait: Bool = false) throws -> ZMQMessage? {
        let handle = try live("zmq_msg_recv")
        let message = ZMQMessage()
        while zmq_msg_recv(message.pointer, handle, dontWait ? ZMQ_DONTWAIT : 0) < 0 {
            let code = zmq_errno()
            if code == EINTR { continue }
            if code == EAGAIN { return nil }
            throw ZeroMQError(code: code, operation: "zmq_msg_recv(\(type))")
        }
        return message
    }

    /// Who sent a message: the `User-Id` a ZAP handler gave its connection (nil without one) and
    /// the file descriptor of that connection (-1 when unknown).
    public struct Sender: Sendable, Equatable {
        public var userID: String?
        public var fileDescriptor: Int32

        public init(userID: String? = nil, fileDescriptor: Int32 = -1) {
            self.userID = userID
            self.fileDescriptor = fileDescriptor
        }
    }

    /// Like ``receiveFrames(dontWait:)``, also telling who sent the message (read off its first
    /// frame that came from the wire: a ROUTER's routing-id frame carries nothing).
    public func receiveFrames(dontWait: Bool = false, sender: inout Sender) throws -> [[UInt8]]? {
        sender = Sender(userID: nil, fileDescriptor: -1)
        var found = false
        return try receiveFrames(dontWait: dontWait) { message in
            guard !found else { return }
            let descriptor = zmq_msg_get(message, ZMQ_SRCFD)
            let userID = zmq_msg_gets(message, "User-Id")
            guard descriptor >= 0 || userID != nil else { return }
            found = true
            sender.userID = userID.map { String(cString: $0) }
            sender.fileDescriptor = descriptor
        }
    }

    /// Receives a whole multipart message as byte arrays, or nil when `dontWait` is set and nothing is
    /// queued. Frames of any size are received whole.
    public func receiveFrames(dontWait: Bool = false) throws -> [[UInt8]]? {
        try receiveFrames(dontWait: dontWait) { _ in }
    }

    private func receiveFrames(
        dontWait: Bool, inspect: (UnsafeMutablePointer<zmq_msg_t>) -> Void
    ) throws -> [[UInt8]]? {
        let handle = try live("zmq_msg_recv")
        var frames: [[UInt8]] = []
        while true {
            zmq_msg_init(scratch)
            let flags: Int32 = (dontWait && frames.isEmpty) ? ZMQ_DONTWAIT : 0
            if zmq_msg_recv(scratch, handle, flags) < 0 {
                let code = zmq_errno()
                zmq_msg_close(scratch)
                if code == EINTR { continue }
                if code == EAGAIN && frames.isEmpty { return nil }
                throw ZeroMQError(code: code, operation: "zmq_msg_recv(\(type))")
            }
            inspect(scratch)
            // Lifeline's messages are 2 to 6 frames: one allocation instead of one per doubling.
            if frames.isEmpty { frames.reserveCapacity(6) }
            let size = zmq_msg_size(scratch)
            if size == 0 {
                frames.append([])
            } else {
                // From a typed buffer: Array(repeating:count:) and Array(unsafeUninitializedCapacity:)
                // take the unspecialized allocation path of the runtime (about 4× the instructions).
                let data = zmq_msg_data(scratch)!.assumingMemoryBound(to: UInt8.self)
                frames.append(Array(UnsafeBufferPointer(start: data, count: size)))
            }
            let more = zmq_msg_more(scratch) != 0
            zmq_msg_close(scratch)
            if !more { return frames }
        }
    }
}
