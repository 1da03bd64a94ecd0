import Foundation
import Glibc
import ZeroMQ

/// The connections of one of the broker's sockets, as libzmq's monitor reports them
/// (`ZMQ_EVENT_ACCEPTED`, `ZMQ_EVENT_DISCONNECTED`): each accepted connection gets a number that is
/// never given again, found from its descriptor while it is open. A routing id or a descriptor can
/// be reused by a later connection; the number cannot, so state tied to it dies with the connection.
///
/// Read on the socket's own thread. An accepted connection's event is queued before any message of
/// that connection can be received, and a closed one's before its descriptor can be reused, so
/// ``update()`` right after a receive attributes the message to the connection that has the
/// descriptor now. (A message a closed connection left queued, read after its descriptor went to
/// a new connection, would be taken for the new one's; both would have to be the same routing id's
/// for that to matter, which libzmq does not allow while the first is attached.)
final class ConnectionMonitor {
    /// A closed connection: its number and the descriptor it had.
    struct Closed: Equatable {
        var number: UInt32
        var descriptor: Int32
    }

    private let pair: ZMQSocket
    private let socket: ZMQSocket
    /// The PAIR's `ZMQ_FD`: readable once an event arrived after the last read that found none, so
    /// ``update()`` costs one `poll` when nothing happened (not a libzmq receive, which costs twice).
    private let signal: Int32
    private var numbers: [Int32: UInt32] = [:]
    private var open: Set<UInt32> = []
    private var last: UInt32 = 0
    private var closed: [Closed] = []

    /// Starts monitoring `socket` (before it binds, so that no connection is missed).
    init(_ socket: ZMQSocket, context: ZMQContext, name: String) throws {
        let endpoint = "inproc://lifeline-monitor-\(name)-\(UUID().uuidString)"
        self.socket = socket
        try socket.monitor(
            endpoint, events: ZMQSocket.acceptedEvent | ZMQSocket.disconnectedEvent)
        pair = try ZMQSocket(context, type: .pair)
        try pair.set(.linger, 0)
        // No limit on the queue of events: a full one would drop them, and it is read every loop turn.
        try pair.set(.receiveHighWaterMark, 0)
        try pair.connect(endpoint)
        signal = Int32(try pair.get(.fileDescriptor))
        while (try? pair.receiveFrames(dontWait: true)) != nil {}
    }

    // The monitor stops before its reader closes (if the socket is open still): see stopMonitor.
    deinit {
        socket.stopMonitor()
        pair.close()
    }

    /// Readable when events may wait: for a poller, so that a closed connection is seen without
    /// waiting for the socket's next message.
    var fileDescriptor: Int32 { signal }

    /// Reads the events queued so far.
    func update() {
        var descriptor = pollfd(fd: signal, events: Int16(POLLIN), revents: 0)
        guard poll(&descriptor, 1, 0) > 0 else { return }
        while let frames = try? pair.receiveFrames(dontWait: true) {
            guard let event = frames.first, event.count >= 6 else { continue }
            let descriptor = event[2...5].reversed().reduce(Int32(0)) { $0 << 8 | Int32($1) }
            switch ZMQSocket.monitorEvent(event) {
            case ZMQSocket.acceptedEvent:
                if let earlier = numbers[descriptor] {
                    open.remove(earlier)
                    closed.append(Closed(number: earlier, descriptor: descriptor))
                }
                last &+= 1
                if last == 0 { last = 1 }
                numbers[descriptor] = last
                open.insert(last)
            case ZMQSocket.disconnectedEvent:
                if let number = numbers.removeValue(forKey: descriptor) {
                    open.remove(number)
                    closed.append(Closed(number: number, descriptor: descriptor))
                }
            default: break
            }
        }
    }

    /// The number of the open connection on `descriptor`; 0 for one the monitor does not report
    /// (inproc, or a descriptor libzmq did not give).
    func number(of descriptor: Int32) -> UInt32 { descriptor < 0 ? 0 : numbers[descriptor] ?? 0 }

    /// Whether connection `number` is still open (0, unreported, always is).
    /// The descriptor of the open connection `number`, if the monitor knows it.
    func descriptor(of number: UInt32) -> Int32? {
        guard number != 0 else { return nil }
        return numbers.first { $0.value == number }?.key
    }

    func isOpen(_ number: UInt32) -> Bool { number == 0 || open.contains(number) }

    /// The connections closed since the last call.
    func takeClosed() -> [Closed] {
        defer { closed.removeAll() }
        return closed
    }
}
