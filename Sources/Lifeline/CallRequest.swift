import LifelineProtocol

/// A call to one of a service's methods, as its handler receives it.
public struct CallRequest: Sendable {
    public let method: String
    /// The key of the actor called (`ana` of `cart/ana`), for a method of actors by key
    /// (``Service/actors(idleAfter:deactivate:_:)``); nil for any other call.
    public let key: String?
    /// The caller's body (`null` when it sent none), parsed when first read.
    public var body: JSONValue { storage.value }
    /// The body as it arrived (typed methods decode from it).
    package var text: [UInt8] { storage.text }
    private let storage: CallBody
    /// The deadline the broker holds the caller to.
    public let timeout: Duration
    /// What the handler can do in return: publish, call, look up.
    public let context: ServiceContext

    init(
        method: String, key: String? = nil, text: [UInt8], tree: JSONValue? = nil, timeout: Duration,
        context: ServiceContext
    ) {
        self.method = method
        self.key = key
        storage = CallBody(text: text, tree: tree)
        self.timeout = timeout
        self.context = context
    }
}

/// Thrown by a method handler to answer with a specific status; the caller receives the status and
/// `{"error": message, ...details}` unchanged.
public struct ServiceError: Error, Sendable, CustomStringConvertible {
    public let status: Status
    public let message: String
    public let details: [String: JSONValue]
    /// Members of the body already written as JSON text (an actor error's value), beside ``details``.
    package var detailTexts: [String: [UInt8]] = [:]

    public init(_ status: Status, _ message: String, details: [String: JSONValue] = [:]) {
        self.status = status
        self.message = message
        self.details = details
    }

    /// The message, as logs and an acknowledgement's `error` show it.
    public var description: String { message }

    /// `{"error": message, ...details}`, members in sorted order, written without a tree: each name
    /// once (a text given for a name in ``details`` too wins, and `error` is always the message).
    var body: [UInt8] {
        var texts: [String: [UInt8]] = details.mapValues { JSONWriter.encode($0) }
        texts.merge(detailTexts) { _, text in text }
        texts["error"] = JSONWriter.encode(.string(message))
        let members = texts.sorted { $0.key < $1.key }
        var text: [UInt8] = [UInt8(ascii: "{")]
        for (index, member) in members.enumerated() {
            if index > 0 { text.append(UInt8(ascii: ",")) }
            text += JSONWriter.encode(.string(member.key))
            text.append(UInt8(ascii: ":"))
            text += member.value
        }
        text.append(UInt8(ascii: "}"))
        return text
    }
}
