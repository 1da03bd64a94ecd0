import Foundation
import LifelineProtocol

/// A lifecycle event as a handler receives it.
public struct Event: Sendable {
    public let name: EventName
    /// Position among all events of the broker's epoch (strictly increasing).
    public let sequence: UInt64
    /// Position among events of this name (a skip means a missed event).
    public let topicSequence: UInt64
    public let epoch: UInt64
    /// The broker's wall clock when it published the event.
    public var publishedAt: Date { Date(timeIntervalSince1970: Double(publishedWallNanoseconds) / 1e9) }
    /// Broker wall clock at publication, nanoseconds since 1970.
    package let publishedWallNanoseconds: UInt64
    /// Broker CLOCK_MONOTONIC at publication, nanoseconds (same host only: the benchmark's latency).
    package let publishedMonotonic: UInt64
    /// This process's CLOCK_MONOTONIC when its socket thread received the event, nanoseconds.
    package let receivedMonotonic: UInt64
    /// The payload object (parsed when first read; reading single fields with the subscript is cheaper).
    public var payload: JSONValue { storage.value }
    let storage: EventPayload
    /// What the handler can do in return: publish, call, look up.
    public let context: ServiceContext
    /// True when the event came from the broker's journal (a resume or a recovered gap).
    public let isReplayed: Bool
    /// Set when the event is a step of a dispatch (then `sequence` is 0: dispatches are not on the bus).
    public let dispatchID: UInt64?
    /// The deadline of this dispatch step.
    public let stepTimeout: Duration?

    /// The position to persist (with the handler's effects) for ``Service/resume(from:)``.
    public var cursor: EventCursor { EventCursor(epoch: epoch, sequence: sequence) }

    init(
        _ message: BusMessage, payload: JSONValue? = nil, receivedAt: UInt64, context: ServiceContext,
        replayed: Bool = false,
        dispatchID: UInt64? = nil, stepTimeout: Int? = nil
    ) {
        receivedMonotonic = receivedAt
        isReplayed = replayed
        self.dispatchID = dispatchID
        self.stepTimeout = stepTimeout.map { .milliseconds($0) }
        name = message.name
        sequence = message.header.sequence
        topicSequence = message.header.topicSequence
        epoch = message.header.epoch
        publishedWallNanoseconds = message.header.publishedWallNanoseconds
        publishedMonotonic = message.header.publishedMonotonicNanoseconds
        storage = payload.map(EventPayload.init) ?? EventPayload(bytes: message.payload)
        self.context = context
    }

    /// The payload field `field`, if present.
    public subscript(field: String) -> JSONValue? { storage[field] }
}
