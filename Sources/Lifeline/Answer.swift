import LifelineProtocol

/// A handler's answer to a dispatched event: its callback result (mPaaS's Continue / Return /
/// ReturnYES / ReturnNO), optionally a rewritten payload for the services after it, and its completion
/// for events that carry one (performFetch: "newData", "noData" or "failed"; shortcut items: a Bool;
/// WatchKit requests: a reply object).
public struct Answer: Sendable, Equatable {
    public var result: CallbackResult
    public var payload: JSONValue?
    public var completion: JSONValue?

    public init(_ result: CallbackResult, payload: JSONValue? = nil, completion: JSONValue? = nil) {
        self.result = result
        self.payload = payload
        self.completion = completion
    }

    /// Not decided here; the next service gets the event.
    public static let `continue` = Answer(.continue)
    /// Fully handled; the chain stops.
    public static let `return` = Answer(.return)
    /// Return YES to the system now.
    public static let returnYES = Answer(.returnYES)
    /// Return NO to the system now.
    public static let returnNO = Answer(.returnNO)

    /// Continue with a rewritten payload (openURL's newURL) that the next services see.
    public static func `continue`(rewriting payload: JSONValue) -> Answer {
        Answer(.continue, payload: payload)
    }

    /// Continue, contributing `completion` to the event's combined completion.
    public static func completed(_ completion: JSONValue) -> Answer {
        Answer(.continue, completion: completion)
    }

    var json: JSONValue {
        var members: [String: JSONValue] = ["result": .string(result.rawValue)]
        if let payload { members["payload"] = payload }
        if let completion { members["completion"] = completion }
        return .object(members)
    }
}
