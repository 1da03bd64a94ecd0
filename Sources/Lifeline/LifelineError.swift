import LifelineProtocol

/// A request that did not succeed: the status the broker or the service answered, and its sentence.
/// Switch on ``code`` to handle a kind of failure:
///
/// ```swift
/// do { route = try await client.call("url", "resolve", ["url": url]) } catch let error as LifelineError {
///     switch error.code {
///     case .notFound: route = nil                       // no such service, method or route
///     case .timeout, .unavailable: throw error          // try again later
///     default: throw error
///     }
/// }
/// ```
public struct LifelineError: Error, Sendable, Equatable, CustomStringConvertible {
    /// What went wrong, by kind.
    public enum Code: Sendable, Equatable {
        /// No such service, method, session or record (404).
        case notFound
        /// The broker or the service did not answer in time (504).
        case timeout
        /// The broker is not reachable or is closing, or the service went away (503).
        case unavailable
        /// The broker's policy does not allow it (403).
        case forbidden
        /// A conflict: a name taken, a change under way, a veto, a lifecycle state (409).
        case conflict
        /// The request itself was wrong: a field, a size, an event's fields, the protocol version
        /// (400, 413, 422, 505).
        case invalid
        /// One of the broker's limits was reached (429).
        case limited
        /// Any other status, such as a service's own error (500 or what it chose).
        case failed(Status)
    }

    public let status: Status
    public let message: String
    /// The reply body as it came, parsed only when ``body`` is read.
    private let bodyFragment: JSONFragment
    /// Trying again cannot help, and no event of a batch caused it: no broker was ever reached at
    /// the client's address, none completed a security handshake with it, or the address is none.
    /// A retry loop passes it on at once.
    package internal(set) var isFinal = false
    /// A standby of a broker group refused the connection's greeting while the group had no leader:
    /// the request was never taken, and may be tried again once one is elected.
    package internal(set) var isStandbyRefusal = false

    /// The whole reply body, when there was one (a service's own error may carry more than `error`).
    public var body: JSONValue { bodyFragment.value }

    /// The reply body's JSON text (`null` when there was none).
    package var bodyText: [UInt8] { bodyFragment.text }

    public init(_ status: Status, _ message: String, body: JSONValue = .null) {
        self.status = status
        self.message = message
        self.bodyFragment = .value(body)
    }

    /// The error a non-2xx reply stands for.
    package init(reply: ControlReply) {
        self.status = reply.status
        self.message = reply.errorMessage
        self.bodyFragment = reply.body.isEmpty ? .value(.null) : .text(reply.body)
    }

    public static func == (left: LifelineError, right: LifelineError) -> Bool {
        left.status == right.status && left.message == right.message && left.body == right.body
    }

    public var description: String { message }

    /// The kind of failure, from ``status``.
    public var code: Code {
        switch status {
        case .notFound: .notFound
        case .timeout: .timeout
        case .unavailable: .unavailable
        case .forbidden: .forbidden
        case .conflict: .conflict
        case .badRequest, .payloadTooLarge, .unprocessable, .versionNotSupported: .invalid
        case .tooMany: .limited
        default: .failed(status)
        }
    }

    /// No broker could be reached at `endpoint` (the SDK's and the CLI's one sentence for it).
    package static func noBroker(at endpoint: String, _ reason: String) -> LifelineError {
        var error = LifelineError(
            .unavailable, "no broker answered at \(endpoint): \(reason); start one with `lifeline up`")
        error.isFinal = true
        return error
    }

    /// Whether a publish may be sent again within its time: the broker did not answer, or was
    /// unavailable for a moment — not when no broker was ever reached.
    package var isWorthRetrying: Bool { (status == .timeout || status == .unavailable) && !isFinal }

    /// A request that could not be sent before its time-out because the only broker that answered
    /// was a standby of a group with no leader: the standby's own sentence.
    package static func standbyRefusal(_ sentence: String) -> LifelineError {
        var error = LifelineError(.unavailable, sentence)
        error.isStandbyRefusal = true
        return error
    }

    /// The broker did not answer in time.
    package static func unanswered(_ command: Command, milliseconds: Int, endpoint: String) -> LifelineError {
        LifelineError(
            .timeout,
            "the broker at \(endpoint) did not answer \(command) within \(milliseconds) ms; is it running?")
    }
}
