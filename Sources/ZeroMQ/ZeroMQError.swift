import CZeroMQ

/// A failed libzmq call: the operation that failed, its `errno`, and libzmq's own explanation.
///
/// `EAGAIN` is never reported as an error: calls that would block in non-blocking mode return `nil` or
/// `false` instead.
public struct ZeroMQError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The `errno` value libzmq reported.
    public let code: Int32
    /// What was being done, e.g. `zmq_bind(tcp://127.0.0.1:*)`.
    public let operation: String

    /// Creates an error for `operation` with the given `errno`.
    public init(code: Int32, operation: String) {
        self.code = code
        self.operation = operation
    }

    /// Captures `zmq_errno()` for a call that just failed.
    static func last(_ operation: @autoclosure () -> String) -> ZeroMQError {
        ZeroMQError(code: zmq_errno(), operation: operation())
    }

    /// `zmq_strerror` for ``code``.
    public var message: String { String(cString: zmq_strerror(code)) }

    /// True when the context was terminated underneath the call (`ETERM`).
    public var isContextTerminated: Bool { code == ETERM }

    public var description: String { "\(operation) failed: \(message) (errno \(code))" }
}
