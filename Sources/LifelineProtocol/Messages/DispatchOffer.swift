/// How a dispatch phase offers its event.
package enum DispatchMode: String, Sendable, Equatable, CaseIterable {
    /// One service after another; the first answer other than `continue` ends the phase.
    case chain
    /// One service after another; every service is offered the event whatever the answers.
    case notify
    /// Every service at once (events with a completion); all answers are combined.
    case concurrent
}

/// OFFER: one step of a dispatch, broker → service.
package struct DispatchOffer: HeaderMessage, Equatable {
    public var event: EventName
    public var dispatch: UInt64
    public var step: Int
    public var timeoutMilliseconds: Int
    public var mode: DispatchMode
    /// The completion rule, for events with a completion.
    public var completion: CompletionRule?
    /// The event's JSON object as text (as rewritten by the services before this one): a typed
    /// handler decodes it straight from the text.
    public var payloadText: [UInt8]

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
        self.payloadText = JSONWriter.encode(payload)
    }

    /// Reads an OFFER: its header, and `payload`, the event's JSON object as text (checked to be
    /// JSON, not parsed).
    /// - Throws: ``ProtocolError`` (400) naming the field and what was wrong.
    init(_ fields: HeaderFields, payload: [UInt8]?) throws(ProtocolError) {
        var offer = Self.blank
        var reader = HeaderReader(fields)
        try offer.visit(&reader)
        if let payload, !payload.isEmpty {
            do {
                _ = try JSONValidator.topLevelType(of: payload)
            } catch {
                throw fields.problem("OFFER payload is not JSON: \(error)")
            }
            offer.payloadText = payload
        }
        self = offer
    }

    package static let command = Command.offer
    package static let blank = DispatchOffer(
        event: EventName(rawValue: ""), dispatch: 0, step: 0, timeoutMilliseconds: 0, mode: .chain,
        completion: nil, payload: .emptyObject)

    package mutating func visit<Visitor: HeaderVisitor>(_ visitor: inout Visitor) throws(Visitor.Failure) {
        // A completion rule this peer does not know (a newer broker's) is read as none.
        var rule = completion?.rawValue
        try visitor.field("completion", &rule)
        completion = rule.flatMap(CompletionRule.init(rawValue:))
        var dispatch: UInt64? = dispatch
        try visitor.field("dispatch", &dispatch, bitPattern: false)
        self.dispatch = dispatch ?? 0
        var name = event.rawValue
        try visitor.field("event", &name)
        event = EventName(rawValue: name)
        try visitor.field("mode", &mode, default: .chain)
        try visitor.field("step", &step, in: 0...Int.max, default: 0)
        try visitor.field("timeoutMs", &timeoutMilliseconds, in: 0...Int.max, default: 0)
    }
}
