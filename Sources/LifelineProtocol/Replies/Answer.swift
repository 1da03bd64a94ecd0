/// A handler's answer to a dispatched event: its callback result (mPaaS's Continue / Return /
/// ReturnYES / ReturnNO), optionally a rewritten payload for the services after it, and its completion
/// for events that carry one (performFetch: "newData", "noData" or "failed"; shortcut items: a Bool;
/// WatchKit requests: a reply object). It is the OFFER reply of the wire protocol.
public struct Answer: Sendable, Equatable {
    public var result: CallbackResult
    public var payload: JSONValue?
    public var completion: JSONValue?

    public init(_ result: CallbackResult, payload: JSONValue? = nil, completion: JSONValue? = nil) {
        self.result = result
        self.payload = payload
        self.completion = completion
    }

    /// Reads the reply body; a missing result means `continue`, an unknown one is an error.
    package init(json: JSONValue) throws(ProtocolError) {
        let text = json["result"]?.stringValue ?? "continue"
        guard let result = CallbackResult(rawValue: text) else {
            throw ProtocolError(
                .badRequest, "answered '\(text)'; expected continue, return, returnYES or returnNO")
        }
        self.result = result
        if let payload = json["payload"], case .object = payload { self.payload = payload }
        completion = json["completion"]
    }

    package var json: JSONValue {
        var members: [String: JSONValue] = ["result": .string(result.rawValue)]
        if let payload { members["payload"] = payload }
        if let completion { members["completion"] = completion }
        return .object(members)
    }
}
