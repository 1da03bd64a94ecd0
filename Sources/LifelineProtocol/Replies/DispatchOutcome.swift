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
    public var trace: [Step]
    public var lifecycle: String
    /// didFinishLaunching only: a handler returned YES or NO, so afterDidFinishLaunching was skipped.
    public var launchEndedEarly: Bool?

    package init(json: JSONValue) {
        event = EventName(rawValue: json["event"]?.stringValue ?? "")
        dispatch = UInt64(json["dispatch"]?.intValue ?? 0)
        result = CallbackResult(rawValue: json["result"]?.stringValue ?? "") ?? .continue
        returnValue = json["returnValue"]?.boolValue
        decidedBy = json["decidedBy"]?.stringValue
        payload = json["payload"] ?? .emptyObject
        completion = json["completion"]
        lifecycle = json["lifecycle"]?.stringValue ?? ""
        launchEndedEarly = json["launchEndedEarly"]?.boolValue
        trace = (json["trace"]?.arrayValue ?? []).map { step in
            Step(
                service: step["service"]?.stringValue ?? "",
                event: EventName(rawValue: step["event"]?.stringValue ?? ""),
                status: step["status"]?.stringValue ?? "",
                answer: step["answer"]?.stringValue.flatMap(CallbackResult.init(rawValue:)),
                durationMicroseconds: step["durationUs"]?.intValue ?? 0, error: step["error"]?.stringValue)
        }
    }
}
