import LifelineProtocol

/// A request to start a micro-app, as an interceptor sees it (mPaaS registerStartApplicationHandler).
public struct StartRequest: Sendable, Equatable {
    public var app: String
    public var params: JSONValue
    public var mode: LaunchMode
    public var clearTop: Bool
    /// The session that asked, if any.
    public var parent: String?
}
