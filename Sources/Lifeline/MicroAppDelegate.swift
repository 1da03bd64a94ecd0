import LifelineProtocol

/// The delegate of one micro-app session (mPaaS's DTMicroApplicationDelegate): one instance per
/// session, created when the session starts and dropped when it exits. Every method has a default;
/// implement the ones the app needs. Actors make good delegates.
///
/// The broker delivers the callbacks in a documented order and waits for each to return before the
/// next (across processes), so keep them short. Router operations (``Router``) called inside a
/// callback run after the current operation finishes.
public protocol MicroAppDelegate: AnyObject, Sendable {
    func didCreate(_ session: AppSession) async
    func willStartLaunching(_ session: AppSession, options: JSONValue) async
    func didFinishLaunching(_ session: AppSession) async
    func willPause(_ session: AppSession) async
    func willResume(_ session: AppSession, options: JSONValue) async
    func didResume(_ session: AppSession, options: JSONValue) async
    func willTerminate(_ session: AppSession, animated: Bool) async
    /// Asked before a normal exit; false keeps the app (default true). Forced exits do not ask.
    func shouldTerminate(_ session: AppSession) async -> Bool
    /// What the app shows: our stand-in for rootController (default `{"screen": app}`).
    func rootRoute(_ session: AppSession) async -> JSONValue
    /// A session this one started has exited, with the result it finished with (the coordinator's
    /// finishFlow); `{"crashed": true}` when its host died.
    func childDidFinish(_ session: AppSession, child: SessionRecord, result: JSONValue) async
    /// An action sent to the session (`lifeline apps action`): the app's own verbs.
    func perform(_ session: AppSession, action: String, body: JSONValue) async throws -> JSONValue
}

extension MicroAppDelegate {
    public func didCreate(_ session: AppSession) async {}
    public func willStartLaunching(_ session: AppSession, options: JSONValue) async {}
    public func didFinishLaunching(_ session: AppSession) async {}
    public func willPause(_ session: AppSession) async {}
    public func willResume(_ session: AppSession, options: JSONValue) async {}
    public func didResume(_ session: AppSession, options: JSONValue) async {}
    public func willTerminate(_ session: AppSession, animated: Bool) async {}
    public func shouldTerminate(_ session: AppSession) async -> Bool { true }
    public func rootRoute(_ session: AppSession) async -> JSONValue { ["screen": .string(session.app)] }
    public func childDidFinish(_ session: AppSession, child: SessionRecord, result: JSONValue) async {}
    public func perform(_ session: AppSession, action: String, body: JSONValue) async throws -> JSONValue {
        throw ServiceError(.notFound, "the app '\(session.app)' has no action '\(action)'")
    }
}
