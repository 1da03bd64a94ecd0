/// DISPATCH: an event offered to its handlers one after another (or all at once for completions).
package struct DispatchRequest: Sendable, Equatable {
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

    init(_ fields: HeaderFields, payload: [UInt8]?) throws(ProtocolError) {
        event = EventName(rawValue: try fields.string("event"))
        payloadBytes = payload ?? []
        self.payload = (try? JSONValue.payload(payload, fallback: .emptyObject)) ?? .emptyObject
        stepTimeoutMilliseconds = try fields.optionalInteger("timeoutMs", in: 1...3_600_000)
        force = try fields.bool("force", default: false)
    }

    var header: JSONValue {
        var members: [String: JSONValue] = ["event": .string(event.rawValue)]
        if let stepTimeoutMilliseconds { members["timeoutMs"] = .int(Int64(stepTimeoutMilliseconds)) }
        if force { members["force"] = true }
        return .object(members)
    }
}
