import LifelineProtocol
import ZeroMQ

/// Consecutive events of one name that leave as one bus message (``BusMessage/maximumBatch`` events
/// and ``BusMessage/maximumBatchBytes`` of payload at most).
struct BusRun {
    private static let version = Array(ProtocolID.bus.utf8)
    private var messages: [BusMessage] = []
    private var headers: [UInt8] = []
    /// The payloads, each after its length, as a bus message of several events carries them.
    private var payloads: [UInt8] = []
    private var bytes = 0
    /// The topic frame of the last name sent (consecutive runs are mostly of one name).
    private var topicName: EventName?
    private var topic: [UInt8] = []

    var isEmpty: Bool { messages.isEmpty }

    func accepts(_ message: BusMessage) -> Bool {
        guard let first = messages.first else { return true }
        return first.name.isIdentical(to: message.name) && messages.count < BusMessage.maximumBatch
            && bytes + message.payload.count <= BusMessage.maximumBatchBytes
    }

    mutating func add(_ message: BusMessage) {
        // A single event goes with its own payload: the packed frame is built from the second on.
        if messages.count == 1 { PackedPayloads.append(messages[0].payload, to: &payloads) }
        if !messages.isEmpty { PackedPayloads.append(message.payload, to: &payloads) }
        messages.append(message)
        message.header.append(to: &headers)
        bytes += message.payload.count
    }

    /// Forgets the events gathered (a fenced leader sends none of them).
    mutating func clear() {
        messages.removeAll(keepingCapacity: true)
        headers.removeAll(keepingCapacity: true)
        payloads.removeAll(keepingCapacity: true)
        bytes = 0
    }

    /// Sends the events as one bus message on `bus` (nothing when there are none), and empties the run.
    mutating func send(on bus: ZMQSocket) throws {
        defer { clear() }
        guard let first = messages.first else { return }
        if topicName?.isIdentical(to: first.name) != true {
            topicName = first.name
            topic = first.name.topic
        }
        try topic.withUnsafeBytes { _ = try bus.send($0, more: true, dontWait: true) }
        try Self.version.withUnsafeBytes { _ = try bus.send($0, more: true) }
        try headers.withUnsafeBytes { _ = try bus.send($0, more: true) }
        try (messages.count == 1 ? first.payload : payloads).withUnsafeBytes { _ = try bus.send($0) }
    }
}
