import CZeroMQ

/// Readiness of a polled socket or file descriptor.
public struct PollEvents: OptionSet, Sendable {
    public let rawValue: Int16
    public init(rawValue: Int16) { self.rawValue = rawValue }

    public static let readable = PollEvents(rawValue: Int16(ZMQ_POLLIN))
    public static let writable = PollEvents(rawValue: Int16(ZMQ_POLLOUT))
}

/// `zmq_poll` over a fixed set of sockets and file descriptors, owned by one thread.
///
/// The poller refers to its sockets without owning them; they must stay open while it is used.
public struct ZMQPoller {
    private var items: [zmq_pollitem_t] = []

    /// An empty poller.
    public init() {}

    /// Adds `socket` and returns its index for ``events(at:)``.
    @discardableResult
    public mutating func add(_ socket: ZMQSocket, events: PollEvents = .readable) -> Int {
        items.append(zmq_pollitem_t(socket: socket.rawHandle, fd: 0, events: events.rawValue, revents: 0))
        return items.count - 1
    }

    /// Adds a plain file descriptor and returns its index for ``events(at:)``.
    @discardableResult
    public mutating func add(fileDescriptor: Int32, events: PollEvents = .readable) -> Int {
        items.append(zmq_pollitem_t(socket: nil, fd: fileDescriptor, events: events.rawValue, revents: 0))
        return items.count - 1
    }

    /// Waits until an item is ready or `timeoutMilliseconds` pass (-1 waits forever, 0 returns at once).
    /// Returns the number of ready items; 0 on timeout or when a signal interrupted the wait.
    @discardableResult
    public mutating func poll(timeoutMilliseconds: Int) throws -> Int {
        let count = items.count
        let ready = items.withUnsafeMutableBufferPointer {
            zmq_poll($0.baseAddress, Int32(count), timeoutMilliseconds)
        }
        if ready < 0 {
            let code = zmq_errno()
            if code == EINTR {
                for index in items.indices { items[index].revents = 0 }
                return 0
            }
            throw ZeroMQError(code: code, operation: "zmq_poll(\(count) items)")
        }
        return Int(ready)
    }

    /// What the last ``poll(timeoutMilliseconds:)`` found ready at `index`.
    public func events(at index: Int) -> PollEvents { PollEvents(rawValue: items[index].revents) }

    /// True when the item at `index` was readable after the last poll.
    public func isReadable(_ index: Int) -> Bool { events(at: index).contains(.readable) }
}
