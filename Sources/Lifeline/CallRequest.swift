import LifelineProtocol

/// A call to one of a service's methods, as its handler receives it.
public struct CallRequest: Sendable {
    public let method: String
    /// The caller's body (`null` when it sent none).
    public let body: JSONValue
    /// The deadline the broker holds the caller to.
    public let timeout: Duration
    /// What the handler can do in return: publish, call, look up.
    public let context: ServiceContext
}

/// Thrown by a method handler to answer with a specific status; the caller receives the status and
/// `{"error": message, ...details}` unchanged.
public struct ServiceError: Error, Sendable {
    public let status: Status
    public let message: String
    public let details: [String: JSONValue]

    public init(_ status: Status, _ message: String, details: [String: JSONValue] = [:]) {
        self.status = status
        self.message = message
        self.details = details
    }

    var body: JSONValue {
        var members = details
        members["error"] = .string(message)
        return .object(members)
    }
}
