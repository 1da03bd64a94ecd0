/// A service's answer to an OFFER: its callback result, a rewritten payload, its part of a completion.
public struct OfferAnswer: Sendable, Equatable {
    public var result: CallbackResult
    public var payload: JSONValue?
    public var completion: JSONValue?

    public init(_ result: CallbackResult, payload: JSONValue? = nil, completion: JSONValue? = nil) {
        self.result = result
        self.payload = payload
        self.completion = completion
    }

    /// Reads the reply body; a missing result means `continue`, an unknown one is an error.
    public init(json: JSONValue) throws(ProtocolError) {
        let text = json["result"]?.stringValue ?? "continue"
        guard let result = CallbackResult(rawValue: text) else {
            throw ProtocolError(
                .badRequest, "answered '\(text)'; expected continue, return, returnYES or returnNO")
        }
        self.result = result
        if let payload = json["payload"], case .object = payload { self.payload = payload }
        completion = json["completion"]
    }

    public var json: JSONValue {
        var members: [String: JSONValue] = ["result": .string(result.rawValue)]
        if let payload { members["payload"] = payload }
        if let completion { members["completion"] = completion }
        return .object(members)
    }
}
