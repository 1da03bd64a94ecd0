/// A handler's answer to a dispatched event: its callback result (mPaaS's Continue / Return /
/// ReturnYES / ReturnNO), optionally a rewritten payload for the services after it, and its completion
/// for events that carry one (performFetch: "newData", "noData" or "failed"; shortcut items: a Bool;
/// WatchKit requests: a reply object). It is the OFFER reply of the wire protocol.
public struct Answer: Sendable, Equatable {
    public var result: CallbackResult
    /// The rewritten payload: a tree, or the text a typed value was written to (read as a tree only
    /// when asked for).
    package var payloadFragment: JSONFragment?
    package var completionFragment: JSONFragment?

    public var payload: JSONValue? {
        get { payloadFragment?.value }
        set { payloadFragment = newValue.map(JSONFragment.value) }
    }

    public var completion: JSONValue? {
        get { completionFragment?.value }
        set { completionFragment = newValue.map(JSONFragment.value) }
    }

    public init(_ result: CallbackResult, payload: JSONValue? = nil, completion: JSONValue? = nil) {
        self.result = result
        self.payloadFragment = payload.map(JSONFragment.value)
        self.completionFragment = completion.map(JSONFragment.value)
    }

    /// An answer whose payload or completion is JSON text already (a typed value's encoding).
    package init(_ result: CallbackResult, text payloadText: [UInt8]?, completionText: [UInt8]?) {
        self.result = result
        self.payloadFragment = payloadText.map(JSONFragment.text)
        self.completionFragment = completionText.map(JSONFragment.text)
    }

    /// Reads the reply body (the OFFER reply's text) without a tree: a rewritten payload or a
    /// completion stays the text it came as. A missing result means `continue`, an unknown one is
    /// an error; a payload that is not an object is no rewrite.
    /// - Throws: ``ProtocolError`` (400) when the body is not a JSON object or its result is unknown.
    package init(body: [UInt8]) throws(ProtocolError) {
        guard let document = try? JSONTape(body), document[0].kind == .object else {
            throw ProtocolError(.badRequest, "the answer is not a JSON object")
        }
        var text = "continue"
        if let result = document.member("result") {
            let kind = document[result].kind
            if kind == .string || kind == .escapedString { text = document.string(at: result) }
        }
        guard let result = CallbackResult(rawValue: text) else {
            throw ProtocolError(
                .badRequest, "answered '\(text)'; expected continue, return, returnYES or returnNO")
        }
        self.result = result
        if let payload = document.member("payload"), document[payload].kind == .object {
            payloadFragment = .text(document.text(at: payload))
        }
        completionFragment = document.member("completion").map { .text(document.text(at: $0)) }
    }

    /// The reply body, written without a tree: a typed payload or completion goes in as its text.
    package var body: [UInt8] {
        var writer = JSONObjectWriter(capacity: 32)
        if let completionFragment { writer.add("completion", text: completionFragment.text) }
        if let payloadFragment { writer.add("payload", text: payloadFragment.text) }
        writer.add("result", result.rawValue)
        return writer.finish()
    }

    public static func == (left: Answer, right: Answer) -> Bool {
        left.result == right.result && left.payload == right.payload && left.completion == right.completion
    }
}

/// A JSON value held as a tree or as text, each turned into the other only when asked for.
package enum JSONFragment: Sendable {
    case value(JSONValue)
    case text([UInt8])

    /// The tree (null for text that is not JSON).
    package var value: JSONValue {
        switch self {
        case .value(let value): value
        case .text(let text): (try? JSONParser.parse(text)) ?? .null
        }
    }

    /// The text.
    package var text: [UInt8] {
        switch self {
        case .value(let value): JSONWriter.encode(value)
        case .text(let text): text
        }
    }
}
