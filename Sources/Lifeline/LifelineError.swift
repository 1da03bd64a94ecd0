import LifelineProtocol

/// A request that did not succeed: the status the broker or the service answered, and its sentence.
public struct LifelineError: Error, Sendable, Equatable, CustomStringConvertible {
    public let status: Status
    public let message: String
    /// The whole reply body, when there was one (a service's own error may carry more than `error`).
    public let body: JSONValue

    public init(_ status: Status, _ message: String, body: JSONValue = .null) {
        self.status = status
        self.message = message
        self.body = body
    }

    /// The error a non-2xx reply stands for.
    public init(reply: ControlReply) {
        self.init(reply.status, reply.errorMessage, body: (try? reply.json()) ?? .null)
    }

    public var description: String { message }

    /// The broker did not answer in time.
    static func unanswered(_ command: Command, milliseconds: Int, endpoint: String) -> LifelineError {
        LifelineError(
            .timeout,
            "the broker at \(endpoint) did not answer \(command) within \(milliseconds) ms; is it running?")
    }
}
