/// The verdict of a dispatch: what the chain decided, who decided, the final payload, the combined
/// completion and every step.
public struct DispatchOutcome: Sendable, Equatable {
    /// One service's step.
    public struct Step: Sendable, Equatable {
        public var service: String
        public var event: EventName
        /// answered, timeout, gone or error.
        public var status: String
        public var answer: CallbackResult?
        public var durationMicroseconds: Int64
        public var error: String?

        package init(
            service: String, event: EventName, status: String, answer: CallbackResult?,
            durationMicroseconds: Int64,
            error: String?
        ) {
            self.service = service
            self.event = event
            self.status = status
            self.answer = answer
            self.durationMicroseconds = durationMicroseconds
            self.error = error
        }
    }

    public var event: EventName
    public var dispatch: UInt64
    public var result: CallbackResult
    /// For BOOL callbacks: what the system gets (the decision, or the event's default).
    public var returnValue: Bool?
    public var decidedBy: String?
    public var payload: JSONValue
    /// For completion events: the combined completion (exactly one).
    public var completion: JSONValue?
    /// For completion events: the rule that combined it.
    public var completionRule: String?
    public var trace: [Step]
    public var lifecycle: String
    /// didFinishLaunching only: a handler returned YES or NO, so afterDidFinishLaunching was skipped.
    public var launchEndedEarly: Bool?
    /// From the request to the verdict, in microseconds.
    public var durationMicroseconds: Int64 = 0
    /// How many services took part.
    public var handlers = 0

    package init(
        event: EventName, dispatch: UInt64, result: CallbackResult, returnValue: Bool?, decidedBy: String?,
        payload: JSONValue, trace: [Step], lifecycle: String
    ) {
        self.event = event
        self.dispatch = dispatch
        self.result = result
        self.returnValue = returnValue
        self.decidedBy = decidedBy
        self.payload = payload
        self.trace = trace
        self.lifecycle = lifecycle
    }
}

extension DispatchOutcome: WireRecord {
    package static var blank: DispatchOutcome {
        DispatchOutcome(
            event: EventName(rawValue: ""), dispatch: 0, result: .continue, returnValue: nil, decidedBy: nil,
            payload: .emptyObject, trace: [], lifecycle: "")
    }
    package static var recordName: String { "the DISPATCH reply" }

    package mutating func visit<Visitor: HeaderVisitor>(_ visitor: inout Visitor) throws(Visitor.Failure) {
        try visitor.field("completion", any: &completion)
        try visitor.field("completionRule", &completionRule)
        try visitor.field("decidedBy", nullable: &decidedBy)
        try visitor.field("dispatch", &dispatch, default: 0, bitPattern: false)
        try visitor.field("durationUs", &durationMicroseconds, default: 0)
        var name = event.rawValue
        try visitor.field("event", &name, default: "")
        event = EventName(rawValue: name)
        try visitor.field("handlers", &handlers, in: 0...Int.max, default: 0)
        try visitor.field("launchEndedEarly", &launchEndedEarly)
        try visitor.field("lifecycle", &lifecycle, default: "")
        try visitor.field("payload", any: &payload, default: .emptyObject)
        try visitor.field("result", &result, default: .continue)
        var value = returnValue.map(JSONValue.bool) ?? .null
        try visitor.field("returnValue", any: &value, default: .null)
        returnValue = value.boolValue
        try visitor.field("trace", records: &trace)
    }
}

extension DispatchOutcome.Step: WireRecord {
    package static var blank: Self {
        Self(
            service: "", event: EventName(rawValue: ""), status: "", answer: nil, durationMicroseconds: 0,
            error: nil)
    }
    package static var recordName: String { "a DISPATCH step" }

    package mutating func visit<Visitor: HeaderVisitor>(_ visitor: inout Visitor) throws(Visitor.Failure) {
        var answered = answer?.rawValue
        try visitor.field("answer", nullable: &answered)
        answer = answered.flatMap(CallbackResult.init(rawValue:))
        try visitor.field("durationUs", &durationMicroseconds, default: 0)
        try visitor.field("error", &error)
        var name = event.rawValue
        try visitor.field("event", &name, default: "")
        event = EventName(rawValue: name)
        try visitor.field("service", &service, default: "")
        try visitor.field("status", &status, default: "")
    }
}
