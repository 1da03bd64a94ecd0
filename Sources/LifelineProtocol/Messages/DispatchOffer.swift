/// How a dispatch phase offers its event.
package enum DispatchMode: String, Sendable, Equatable {
    /// One service after another; the first answer other than `continue` ends the phase.
    case chain
    /// One service after another; every service is offered the event whatever the answers.
    case notify
    /// Every service at once (events with a completion); all answers are combined.
    case concurrent
}

/// OFFER: one step of a dispatch, broker → service.
package struct DispatchOffer: Sendable, Equatable {
    public var event: EventName
    public var dispatch: UInt64
    public var step: Int
    public var timeoutMilliseconds: Int
    public var mode: DispatchMode
    /// The completion rule, for events with a completion.
    public var completion: CompletionRule?
    /// The event's JSON object (as rewritten by the services before this one).
    public var payload: JSONValue

    public init(
        event: EventName, dispatch: UInt64, step: Int, timeoutMilliseconds: Int, mode: DispatchMode,
        completion: CompletionRule?, payload: JSONValue
    ) {
        self.event = event
        self.dispatch = dispatch
        self.step = step
        self.timeoutMilliseconds = timeoutMilliseconds
        self.mode = mode
        self.completion = completion
        self.payload = payload
    }

    init(_ fields: HeaderFields, payload: [UInt8]?) throws(ProtocolError) {
        event = EventName(rawValue: try fields.string("event"))
        dispatch = try fields.optionalUnsigned("dispatch") ?? 0
        step = try fields.optionalInteger("step", in: 0...Int.max) ?? 0
        timeoutMilliseconds = try fields.optionalInteger("timeoutMs", in: 0...Int.max) ?? 0
        let modeName = try fields.optionalString("mode") ?? "chain"
        guard let mode = DispatchMode(rawValue: modeName) else {
            throw fields.problem("OFFER mode must be chain, notify or concurrent, not '\(modeName)'")
        }
        self.mode = mode
        completion = try fields.optionalString("completion").flatMap(CompletionRule.init(rawValue:))
        do {
            self.payload = try JSONValue.payload(payload, fallback: .emptyObject)
        } catch {
            throw fields.problem("OFFER payload is not JSON: \(error)")
        }
    }

    var header: JSONValue {
        var members: [String: JSONValue] = [
            "event": .string(event.rawValue), "dispatch": .int(Int64(dispatch)), "step": .int(Int64(step)),
            "timeoutMs": .int(Int64(timeoutMilliseconds)), "mode": .string(mode.rawValue),
        ]
        if let completion { members["completion"] = .string(completion.rawValue) }
        return .object(members)
    }
}
