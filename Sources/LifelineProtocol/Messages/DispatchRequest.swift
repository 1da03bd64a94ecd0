/// DISPATCH: an event offered to its handlers one after another (or all at once for completions).
package struct DispatchRequest: HeaderMessage, Equatable {
    public var event: EventName
    /// The event's JSON object.
    public var payload: JSONValue
    /// The deadline of each step, unless the service or the event sets its own.
    public var stepTimeoutMilliseconds: Int?
    /// Apply the lifecycle transition even when it makes no sense in the current state.
    public var force: Bool
    /// The payload frame as received, for the broker's checks (empty when built locally).
    public var payloadBytes: [UInt8]

    public init(
        event: EventName, payload: JSONValue = .emptyObject, stepTimeoutMilliseconds: Int? = nil,
        force: Bool = false
    ) {
        self.event = event
        self.payload = payload
        self.stepTimeoutMilliseconds = stepTimeoutMilliseconds
        self.force = force
        self.payloadBytes = JSONWriter.encode(payload)
    }

    /// Reads a DISPATCH: its header, and `payload`, the event's JSON object.
    /// - Throws: ``ProtocolError`` (400) naming the field and what was wrong.
    init(_ fields: HeaderFields, payload: [UInt8]?) throws(ProtocolError) {
        var request = Self.blank
        var reader = HeaderReader(fields)
        try request.visit(&reader)
        request.payloadBytes = payload ?? []
        request.payload = (try? JSONValue.payload(payload, fallback: .emptyObject)) ?? .emptyObject
        self = request
    }

    package static let command = Command.dispatch
    package static let blank = DispatchRequest(event: EventName(rawValue: ""))

    package mutating func visit<Visitor: HeaderVisitor>(_ visitor: inout Visitor) throws(Visitor.Failure) {
        var name = event.rawValue
        try visitor.field("event", &name)
        event = EventName(rawValue: name)
        try visitor.field("force", &force, default: false)
        try visitor.field("timeoutMs", &stepTimeoutMilliseconds, in: 1...3_600_000)
    }
}
