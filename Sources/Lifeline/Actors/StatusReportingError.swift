/// An error that chooses the status of the reply when a hosted actor's func throws it (500
/// otherwise): a refused sign-in may be 401, a missing record 404. A status outside 400–599 counts
/// as 500. The error still reaches a Swift caller as its own type. Conform where it is thrown; the
/// type itself may live in a module that does not import Lifeline (mark the conformance
/// `@retroactive` when that module is not in your package):
///
/// ```swift
/// extension SignInRefused: StatusReportingError {
///     public var status: Status { Status(rawValue: 401) }
/// }
/// ```
public protocol StatusReportingError: Error {
    /// The reply's status.
    var status: Status { get }
}
