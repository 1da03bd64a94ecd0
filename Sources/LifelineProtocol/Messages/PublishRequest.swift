/// One event of a PUBLISH: its name and its JSON object as UTF-8 text (empty means `{}`).
public struct PublishedEvent: Sendable, Equatable {
    public var name: EventName
    public var payload: [UInt8]

    public init(_ name: EventName, payload: [UInt8] = []) {
        self.name = name
        self.payload = payload
    }
}

/// PUBLISH: an event (or a batch of events, published in order with consecutive sequences) for the
/// bus, with how the publisher wants it delivered and answered.
package struct PublishRequest: Sendable, Equatable {
    /// Most events one PUBLISH carries.
    public static let maximumBatch = 10_000

    /// The (first) event's name as sent (checked by the broker against the naming rule and the
    /// catalogue).
    public var event: EventName
    /// The (first) event's JSON object as UTF-8 text; empty means `{}`.
    public var payload: [UInt8]
    /// A batch: the events after the first, in order (empty for a single event).
    public var rest: [PublishedEvent] = []
    /// Wait for every subscriber's acknowledgement: nil lets the event's own rule decide.
    public var acknowledged: Bool?
    /// How long to wait for acknowledgements.
    public var timeoutMilliseconds: Int?
    /// Apply the lifecycle transition even when it makes no sense in the current state.
    public var force: Bool
    /// False: send no reply at all (firehose publishers).
    public var reply: Bool
    /// The publisher's own id for this publication, unique per publisher: a repeat (a retry after a
    /// timeout) is answered with the first receipt and published only once.
    public var publishID: String?

    /// Longest accepted ``publishID``, in UTF-8 bytes.
    public static let maximumPublishIDLength = 128

    public init(
        event: EventName, payload: [UInt8] = [], acknowledged: Bool? = nil, timeoutMilliseconds: Int? = nil,
        force: Bool = false, reply: Bool = true, publishID: String? = nil
    ) {
        self.event = event
        self.payload = payload
        self.acknowledged = acknowledged
        self.timeoutMilliseconds = timeoutMilliseconds
        self.force = force
        self.reply = reply
        self.publishID = publishID
    }

    /// A batch of `events` (at least one), published in order, answered (or not) once.
    public init(batch events: [PublishedEvent], reply: Bool = true, publishID: String? = nil) {
        precondition(!events.isEmpty, "a batch has at least one event")
        self.init(event: events[0].name, payload: events[0].payload, reply: reply, publishID: publishID)
        rest = Array(events.dropFirst())
    }

    /// The payload frame: the event's payload, or for a batch every payload after its length.
    package var frame: [UInt8] {
        rest.isEmpty ? payload : PackedPayloads.frame(rest.lazy.map(\.payload), after: payload)
    }

    /// How many events this PUBLISH carries.
    public var count: Int { 1 + rest.count }

    /// Every event, in order.
    public var events: [PublishedEvent] { [PublishedEvent(event, payload: payload)] + rest }

    /// The event at `index` (0 is the first), without building the list.
    public func event(at index: Int) -> PublishedEvent {
        index == 0 ? PublishedEvent(event, payload: payload) : rest[index - 1]
    }

    /// True when the events do not all have the same name.
    public var isMixed: Bool { rest.contains { $0.name != event } }

    init(_ fields: HeaderFields, payload: [UInt8]?) throws(ProtocolError) {
        let events = try Self.events(fields, payload: payload)
        let publishID = try fields.optionalString("publishId")
        if let publishID, publishID.isEmpty || publishID.utf8.count > Self.maximumPublishIDLength {
            throw fields.problem("PUBLISH 'publishId' must be 1...\(Self.maximumPublishIDLength) bytes")
        }
        self.init(
            event: events[0].name, payload: events[0].payload, acknowledged: try fields.optionalBool("ack"),
            timeoutMilliseconds: try fields.optionalInteger("timeoutMs", in: 1...3_600_000),
            force: try fields.bool("force", default: false), reply: try fields.bool("reply", default: true),
            publishID: publishID)
        rest = Array(events.dropFirst())
    }

    /// The events of a PUBLISH: one (`event`, the payload frame as it is), or a batch (`event` and
    /// `count`, or `events`; the payload frame packed, see ``PackedPayloads``).
    private static func events(_ fields: HeaderFields, payload: [UInt8]?) throws(ProtocolError)
        -> [PublishedEvent]
    {
        let names = fields.value("events") == nil ? nil : try fields.strings("events")
        if names != nil, fields.value("event") != nil {
            throw fields.problem("PUBLISH takes 'event' or 'events', not both")
        }
        if let names, names.isEmpty || names.count > maximumBatch {
            throw fields.problem("PUBLISH 'events' names 1...\(maximumBatch) events")
        }
        let count = try fields.optionalInteger("count", in: 1...maximumBatch) ?? names?.count
        if let names, names.count != count {
            throw fields.problem("PUBLISH 'events' names \(names.count) events but 'count' is \(count ?? 0)")
        }
        guard let count else {
            return [PublishedEvent(EventName(rawValue: try fields.string("event")), payload: payload ?? [])]
        }
        let payloads = try PackedPayloads.unpack(payload ?? [], count: count, what: "PUBLISH payloads frame")
        if let names {
            return zip(names, payloads).map { PublishedEvent(EventName(rawValue: $0), payload: $1) }
        }
        let name = EventName(rawValue: try fields.string("event"))
        return payloads.map { PublishedEvent(name, payload: $0) }
    }

    /// A single event's PUBLISH with request id `id`: the frames of its ControlRequest, its header
    /// written without a tree (nil for a batch).
    public func frames(id: [UInt8]) -> [[UInt8]]? {
        guard rest.isEmpty else { return nil }
        var header = JSONObjectWriter(capacity: 32 + event.rawValue.utf8.count)
        if let acknowledged { header.add("ack", acknowledged) }
        header.add("event", event.rawValue)
        if force { header.add("force", true) }
        if let publishID { header.add("publishId", publishID) }
        if !reply { header.add("reply", false) }
        if let timeoutMilliseconds { header.add("timeoutMs", Int64(timeoutMilliseconds)) }
        return [ProtocolID.controlBytes, Self.commandBytes, id, header.finish(), payload]
    }

    private static let commandBytes = Array(Command.publish.rawValue.utf8)

    var header: JSONValue {
        var members: [String: JSONValue] =
            isMixed
            ? ["events": .array(events.map { .string($0.name.rawValue) })]
            : ["event": .string(event.rawValue)]
        if count > 1 { members["count"] = .int(Int64(count)) }
        if let acknowledged { members["ack"] = .bool(acknowledged) }
        if let timeoutMilliseconds { members["timeoutMs"] = .int(Int64(timeoutMilliseconds)) }
        if force { members["force"] = true }
        if !reply { members["reply"] = false }
        if let publishID { members["publishId"] = .string(publishID) }
        return .object(members)
    }
}
