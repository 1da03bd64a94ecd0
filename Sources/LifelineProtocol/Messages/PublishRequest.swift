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

    /// Reads a PUBLISH: its header (``PublishHeader``), and its payload frame — one event's payload,
    /// or a batch's packed payloads (see ``PackedPayloads``).
    /// - Throws: ``ProtocolError`` (400) naming the field and what was wrong.
    init(_ fields: HeaderFields, payload: [UInt8]?) throws(ProtocolError) {
        let header = try PublishHeader(fields)
        let events = try Self.events(header, fields: fields, payload: payload)
        self.init(
            event: events[0].name, payload: events[0].payload, acknowledged: header.ack,
            timeoutMilliseconds: header.timeoutMs, force: header.force, reply: header.reply,
            publishID: header.publishId)
        rest = Array(events.dropFirst())
    }

    /// The events of a PUBLISH: one (`event`, the payload frame as it is), or a batch (`event` and
    /// `count`, or `events`; the payload frame packed).
    private static func events(_ header: PublishHeader, fields: HeaderFields, payload: [UInt8]?)
        throws(ProtocolError) -> [PublishedEvent]
    {
        let names = header.events.isEmpty && fields.value("events") == nil ? nil : header.events
        if names != nil, header.event != nil {
            throw fields.problem("PUBLISH takes 'event' or 'events', not both")
        }
        if let names, names.isEmpty || names.count > maximumBatch {
            throw fields.problem("PUBLISH 'events' names 1...\(maximumBatch) events")
        }
        let count = header.count ?? names?.count
        if let names, names.count != count {
            throw fields.problem("PUBLISH 'events' names \(names.count) events but 'count' is \(count ?? 0)")
        }
        guard let count else {
            guard let name = header.event else { throw fields.problem("PUBLISH needs a string 'event'") }
            return [PublishedEvent(EventName(rawValue: name), payload: payload ?? [])]
        }
        let payloads = try PackedPayloads.unpack(payload ?? [], count: count, what: "PUBLISH payloads frame")
        if let names {
            return zip(names, payloads).map { PublishedEvent(EventName(rawValue: $0), payload: $1) }
        }
        guard let name = header.event else { throw fields.problem("PUBLISH needs a string 'event'") }
        return payloads.map { PublishedEvent(EventName(rawValue: name), payload: $0) }
    }

    /// The PUBLISH with request id `id`: its header (``PublishHeader``) and its payload frame.
    public func frames(id: [UInt8]) -> [[UInt8]] { PublishHeader(self).frames(id: id, payload: frame) }
}

/// PUBLISH's header, declared once: the events' names (`event`, or for a batch of several names
/// `events`; `count` for a batch) and how the publisher wants them delivered and answered.
struct PublishHeader: HeaderMessage {
    var ack: Bool?
    var count: Int?
    var event: String?
    var events: [String] = []
    var force = false
    var publishId: String?
    var reply = true
    var timeoutMs: Int?

    static let command = Command.publish
    static let blank = PublishHeader()

    init() {}

    /// The header of `request`.
    init(_ request: PublishRequest) {
        ack = request.acknowledged
        count = request.count > 1 ? request.count : nil
        if request.isMixed {
            events = request.events.map(\.name.rawValue)
        } else {
            event = request.event.rawValue
        }
        force = request.force
        publishId = request.publishID
        reply = request.reply
        timeoutMs = request.timeoutMilliseconds
    }

    mutating func visit<Visitor: HeaderVisitor>(_ visitor: inout Visitor) throws(Visitor.Failure) {
        try visitor.field("ack", &ack)
        try visitor.field("count", &count, in: 1...PublishRequest.maximumBatch)
        try visitor.field("event", &event)
        try visitor.field("events", &events)
        try visitor.field("force", &force, default: false)
        try visitor.field("publishId", &publishId)
        try visitor.check(
            publishId.map { $0.isEmpty || $0.utf8.count > PublishRequest.maximumPublishIDLength } == true
                ? "'publishId' must be 1...\(PublishRequest.maximumPublishIDLength) bytes" : nil)
        try visitor.field("reply", &reply, default: true)
        try visitor.field("timeoutMs", &timeoutMs, in: 1...3_600_000)
    }
}
