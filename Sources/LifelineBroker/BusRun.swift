import LifelineProtocol
import ZeroMQ

/// Consecutive events of one name that leave as one bus message (``BusMessage/maximumBatch`` events
/// and ``BusMessage/maximumBatchBytes`` of payload at most).
struct BusRun {
    private static let version = Array(ProtocolID.bus.utf8)
    /// The run's first event (its name is the run's, its payload goes alone when it stays alone).
    private var first: BusMessage?
    private var count = 0
    private var headers: [UInt8] = []
    /// The payloads, each after its length, as a bus message of several events carries them.
    private var payloads: [UInt8] = []
    private var bytes = 0
    /// The topic frame of the last name sent (consecutive runs are mostly of one name).
    private var topicName: EventName?
    private var topic: [UInt8] = []

    var isEmpty: Bool { count == 0 }

    func accepts(_ message: BusMessage) -> Bool {
        guard let first else { return true }
        return first.name.isIdentical(to: message.name) && count < BusMessage.maximumBatch
            && bytes + message.payload.count <= BusMessage.maximumBatchBytes
    }

    mutating func add(_ message: BusMessage) {
        // A single event goes with its own payload: the packed frame is built from the second on.
        if count == 1, let first { PackedPayloads.append(first.payload, to: &payloads) }
        if count == 0 { first = message } else { PackedPayloads.append(message.payload, to: &payloads) }
        count += 1
        message.header.append(to: &headers)
        bytes += message.payload.count
    }

    /// Forgets the events gathered (a fenced leader sends none of them).
    mutating func clear() {
        first = nil
        count = 0
        headers.removeAll(keepingCapacity: true)
        payloads.removeAll(keepingCapacity: true)
        bytes = 0
    }

    /// Sends the events as one bus message on `bus` (nothing when there are none), and empties the run.
    mutating func send(on bus: ZMQSocket) throws {
        defer { clear() }
        guard let first else { return }
        if topicName?.isIdentical(to: first.name) != true {
            topicName = first.name
            topic = first.name.topic
        }
        try topic.withUnsafeBytes { _ = try bus.send($0, more: true, dontWait: true) }
        try Self.version.withUnsafeBytes { _ = try bus.send($0, more: true) }
        try headers.withUnsafeBytes { _ = try bus.send($0, more: true) }
        try (count == 1 ? first.payload : payloads).withUnsafeBytes { _ = try bus.send($0) }
    }
}
