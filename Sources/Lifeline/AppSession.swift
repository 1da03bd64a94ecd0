import LifelineProtocol

/// One running micro-app session, as its delegate sees it.
public struct AppSession: Sendable {
    /// The session as the broker recorded it when it started (id, app, params, mode, parent, …).
    public let record: SessionRecord
    /// Calls, publishing and lookups through the host's connection.
    public let context: ServiceContext
    /// Moves on the stack: push, present, pop, dismiss, setRoot, popToRoot, finish.
    public let router: Router

    public var id: String { record.id }
    public var app: String { record.app }
    public var params: JSONValue { record.params }

    /// Writes a log line tagged with the session.
    public func log(_ message: String) { context.log("\(app) (\(id)): \(message)") }
}

/// The coordinator's router over the Context's stack. Each call is sent to the broker at once and
/// runs after the operation in progress; it returns without waiting (failures are logged). Use
/// ``LifelineClient/apps(_:)`` to wait for an operation's result outside a callback.
///
/// Every change carries an id (made from the callback's id when it is asked for in a callback), so
/// the host's connection sends it again after it lost the broker, and the broker does it once.
public struct Router: Sendable {
    let client: LifelineClient
    let session: String
    let log: @Sendable (String) -> Void

    private func send(_ operation: AppsRequest, _ what: String) {
        let operationID =
            AppCallbackScope.current?.nextOperationID()
            ?? "\(session).\(String(UInt64.random(in: .min ... .max), radix: 36))"
        client.send(.apps(operation, operationID: operationID), timeout: .seconds(60)) { result in
            guard case .failure(let error) = result else { return }
            // Sent again after a reconnect while the first copy still runs: that one counts.
            if error.status == .conflict, error.message.hasSuffix("is under way already") { return }
            log("\(what) failed: \(error.message)")
        }
    }

    /// Starts `app` over the stack, as a child of this session.
    public func push(_ app: String, params: JSONValue = .emptyObject, animated: Bool = true) {
        start(app, params: params, mode: animated ? .pushWithAnimation : .pushNoAnimation)
    }

    /// Starts `app` as a presented (modal) child of this session.
    public func present(_ app: String, params: JSONValue = .emptyObject, animated: Bool = true) {
        start(app, params: params, mode: animated ? .presentWithAnimation : .presentNoAnimation)
    }

    /// Starts `app` with any mode; `clearTop` pops back to an existing session of it.
    public func start(
        _ app: String, params: JSONValue = .emptyObject, mode: LaunchMode = .pushWithAnimation,
        clearTop: Bool = false
    ) {
        send(
            .start(AppStart(app: app, params: params, mode: mode, clearTop: clearTop, parent: session)),
            "start of \(app)")
    }

    /// Exits the top session (its shouldTerminate may refuse).
    public func pop() { send(.exit(AppExit(target: .top)), "pop") }

    /// Closes the topmost presented session and everything above it.
    public func dismiss() { send(.dismiss, "dismiss") }

    /// Exits everything above the Launcher (or everything) and starts `app` as the root of the flow.
    public func setRoot(_ app: String, params: JSONValue = .emptyObject) {
        send(
            .start(AppStart(app: app, params: params, parent: session, replacesRoot: true)), "setRoot \(app)")
    }

    /// Exits every session above the bottom one.
    public func popToRoot() { send(.popToRoot, "popToRoot") }

    /// Ends this session with `result`: its parent hears it in childDidFinish (the finishFlow).
    public func finish(result: JSONValue = .null) {
        send(.exit(AppExit(target: .session(session), force: true, result: result)), "finish")
    }
}
