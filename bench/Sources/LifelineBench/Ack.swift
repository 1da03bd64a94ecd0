import Foundation
import Glibc
import Lifeline
import LifelineProtocol
import LifelineSupport
import Synchronization
import ZeroMQ

/// A subscriber's report of one received event: which subscriber, which event, when its handler ran
/// (CLOCK_MONOTONIC), how many benchmark events it has received in all, and for Lifeline the broker's
/// publish stamp and the socket thread's receive stamp (0 for raw subscribers). 44 bytes, little-endian.
struct Ack: Sendable {
    var index: UInt32
    var key: UInt64
    var received: UInt64
    var count: UInt64
    var published: UInt64 = 0
    var socketReceived: UInt64 = 0

    func encoded() -> [UInt8] {
        var bytes = [UInt8](repeating: 0, count: 44)
        withUnsafeBytes(of: index.littleEndian) { bytes.replaceSubrange(0..<4, with: $0) }
        for (offset, value) in [(4, key), (12, received), (20, count), (28, published), (36, socketReceived)]
        {
            withUnsafeBytes(of: value.littleEndian) { bytes.replaceSubrange(offset..<(offset + 8), with: $0) }
        }
        return bytes
    }

    init(
        index: UInt32, key: UInt64, received: UInt64, count: UInt64, published: UInt64 = 0,
        socketReceived: UInt64 = 0
    ) {
        self.index = index
        self.key = key
        self.received = received
        self.count = count
        self.published = published
        self.socketReceived = socketReceived
    }

    init?(_ bytes: [UInt8]) {
        guard bytes.count == 44 else { return nil }
        func word(_ offset: Int) -> UInt64 {
            bytes[offset..<(offset + 8)].withUnsafeBytes {
                UInt64(littleEndian: $0.loadUnaligned(as: UInt64.self))
            }
        }
        index = bytes[0..<4].withUnsafeBytes { UInt32(littleEndian: $0.loadUnaligned(as: UInt32.self)) }
        key = word(4)
        received = word(12)
        count = word(20)
        published = word(28)
        socketReceived = word(36)
    }
}

/// Sends acks from event handlers. Lifeline runs handlers on the service's socket thread (not on the
/// Swift pool), so the first handler creates a PUSH socket there and later acks go out directly, like a
/// raw subscriber's; a call from any other thread goes through a mailbox to a dedicated sender thread.
final class AckSender: @unchecked Sendable {
    private let mailbox = Mailbox<Ack>()
    private let endpoint: String
    /// One PUSH socket per thread that sends acks (the socket thread for inline handlers, the
    /// handler thread for the others), each touched only by its own thread: an ack leaves from the
    /// thread whose handler ran, with no hop of its own in the measured path.
    private let sockets = Mutex<[UInt: ZMQSocket]>([:])

    func send(_ ack: Ack) {
        let me = UInt(pthread_self())
        do {
            let socket = try sockets.withLock { sockets -> ZMQSocket in
                if let socket = sockets[me] { return socket }
                let socket = try ZMQSocket(ZMQContext.shared, type: .push)
                try socket.set(.sendHighWaterMark, 0)
                try socket.connect(endpoint)
                sockets[me] = socket
                return socket
            }
            try socket.send(frames: [ack.encoded()])
        } catch {
            mailbox.post(ack)
        }
    }

    init(endpoint: String) {
        self.endpoint = endpoint
        let mailbox = self.mailbox
        let thread = Thread {
            do {
                let push = try ZMQSocket(ZMQContext.shared, type: .push)
                try push.set(.sendHighWaterMark, 0)
                try push.connect(endpoint)
                var poller = ZMQPoller()
                poller.add(fileDescriptor: mailbox.fileDescriptor)
                while true {
                    try poller.poll(timeoutMilliseconds: -1)
                    for ack in mailbox.drain() { try push.send(frames: [ack.encoded()]) }
                }
            } catch {
                Console.error("ack sender: \(error)")
            }
        }
        thread.start()
    }

}
