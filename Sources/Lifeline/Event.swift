import LifelineProtocol

/// A lifecycle event as a handler receives it.
public struct Event: Sendable {
    public let name: EventName
    /// Position among all events of the broker's epoch (strictly increasing).
    public let sequence: UInt64
    /// Position among events of this name (a skip means a missed event).
    public let topicSequence: UInt64
    public let epoch: UInt64
    /// Broker wall clock at publication, nanoseconds since 1970.
    public let publishedAt: UInt64
    /// Broker CLOCK_MONOTONIC at publication (same host only).
    public let publishedMonotonic: UInt64
    /// This process's CLOCK_MONOTONIC when its socket thread received the event.
    public let receivedMonotonic: UInt64
    /// The payload object.
    public let payload: JSONValue
    /// What the handler can do in return: publish, call, look up.
    public let context: ServiceContext

    init(_ message: BusMessage, payload: JSONValue, receivedAt: UInt64, context: ServiceContext) {
        receivedMonotonic = receivedAt
        name = message.name
        sequence = message.header.sequence
        topicSequence = message.header.topicSequence
        epoch = message.header.epoch
        publishedAt = message.header.publishedWallNanoseconds
        publishedMonotonic = message.header.publishedMonotonicNanoseconds
        self.payload = payload
        self.context = context
    }

    /// The payload field `field`, if present.
    public subscript(field: String) -> JSONValue? { payload[field] }
}
