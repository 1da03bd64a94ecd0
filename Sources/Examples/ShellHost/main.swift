// lifeline-shell: hosts the micro-apps of the demo. The Launcher is a coordinator: it asks the gateway
// whether someone is signed in and starts `login` or `home`; when login finishes signed in it starts
// home, and when home signs out it starts login again (the coordinator article's flows).
import GatewayAPI
import Lifeline

/// Prints every callback as `CALLBACK session app callback`, the order the tests check.
func trace(_ session: AppSession, _ callback: String) {
    print("CALLBACK \(session.id) \(session.app) \(callback)")
}

/// The gateway, found by name: a reference to the distributed actor it hosts (this process has only
/// its protocol, from GatewayAPI).
typealias GatewayReference = $SignInGateway<LifelineActorSystem>

/// Asks the gateway, again while the broker is away or the gateway has not registered with a
/// restarted broker yet (its signIn and signOut may safely run twice). The runtime does not retry
/// calls itself: only the app knows which of its calls are idempotent.
func askGateway<T: Sendable>(
    _ session: AppSession, _ ask: (GatewayReference) async throws -> T
) async throws -> T {
    session.context.actorSystem.registerErrors(SignInRefused.self)
    let gateway = try GatewayReference.resolve(id: "gateway", using: session.context.actorSystem)
    let deadline = ContinuousClock.now + .seconds(20)
    while true {
        do {
            return try await ask(gateway)
        } catch let error as LifelineError
            where [.unavailable, .timeout, .notFound].contains(error.status) && .now < deadline
        {
            try await Task.sleep(for: .milliseconds(200))
        }
    }
}

/// Runs an action, tracing `ACTION session app action started` and `… done` (or `… failed: why`).
func traced(_ session: AppSession, _ action: String, _ body: () async throws -> JSONValue) async throws
    -> JSONValue
{
    print("ACTION \(session.id) \(session.app) \(action) started")
    do {
        let result = try await body()
        print("ACTION \(session.id) \(session.app) \(action) done")
        return result
    } catch {
        print("ACTION \(session.id) \(session.app) \(action) failed: \(error)")
        throw error
    }
}

/// Delegates of this host trace every callback they do not implement themselves.
protocol TracedApp: MicroAppDelegate {}

extension TracedApp {
    func didCreate(_ session: AppSession) async { trace(session, "didCreate") }
    func willStartLaunching(_ session: AppSession, options: JSONValue) async {
        trace(session, "willStartLaunching")
    }
    func didFinishLaunching(_ session: AppSession) async { trace(session, "didFinishLaunching") }
    func willPause(_ session: AppSession) async { trace(session, "willPause") }
    func willResume(_ session: AppSession, options: JSONValue) async { trace(session, "willResume") }
    func didResume(_ session: AppSession, options: JSONValue) async { trace(session, "didResume") }
    func willTerminate(_ session: AppSession, animated: Bool) async { trace(session, "willTerminate") }
}

/// The Launcher: picks the flow from the gateway's state and reacts to flows that finish.
actor LauncherApp: TracedApp {
    func didFinishLaunching(_ session: AppSession) async {
        trace(session, "didFinishLaunching")
        await route(session)
    }
    func rootRoute(_ session: AppSession) async -> JSONValue {
        ["screen": "launcher", "tabs": ["home", "settings"]]
    }

    func childDidFinish(_ session: AppSession, child: SessionRecord, result: JSONValue) async {
        trace(session, "childDidFinish \(child.app) \(result)")
        if child.app == "login", result["signedIn"] == true {
            session.router.push("home", params: ["user": result["user"] ?? .null])
        } else if child.app == "home", result["signedOut"] == true {
            session.router.push("login")
        } else if result["crashed"] == true {
            await route(session)
        }
    }

    /// The AppCoordinator's start: the main flow when signed in, else the authorization flow.
    private func route(_ session: AppSession) async {
        let state = try? await askGateway(session) { try await $0.state() }
        if let state, state.signedIn {
            session.router.push("home", params: ["user": state.user.map { .string($0) } ?? .null])
        } else {
            session.router.push("login")
        }
    }
}

/// The authorization flow: `signIn` checks the user with the gateway and finishes with the result.
actor LoginApp: TracedApp {
    func rootRoute(_ session: AppSession) async -> JSONValue {
        ["screen": "login", "fields": ["user", "password"]]
    }

    func perform(_ session: AppSession, action: String, body: JSONValue) async throws -> JSONValue {
        guard action == "signIn" else {
            throw ServiceError(.notFound, "login answers the action signIn {user, password}")
        }
        return try await traced(session, action) {
            let (user, password) = (body["user"]?.stringValue ?? "", body["password"]?.stringValue ?? "")
            let state = try await askGateway(session) { try await $0.signIn(user: user, password: password) }
            let result: JSONValue = [
                "signedIn": .bool(state.signedIn), "user": state.user.map { .string($0) } ?? .null,
            ]
            session.router.finish(result: result)
            return result
        }
    }
}

/// The main flow: shows the user; `signOut` ends it. While `edit` has unsaved changes, home refuses a
/// normal exit (shouldTerminate); `save` allows it again.
actor HomeApp: TracedApp {
    private var unsaved = false

    func shouldTerminate(_ session: AppSession) async -> Bool {
        trace(session, "shouldTerminate \(!unsaved)")
        return !unsaved
    }
    func rootRoute(_ session: AppSession) async -> JSONValue {
        ["screen": "home", "user": session.params["user"] ?? .null]
    }

    func perform(_ session: AppSession, action: String, body: JSONValue) async throws -> JSONValue {
        switch action {
        case "signOut":
            return try await traced(session, action) {
                try await askGateway(session) { try await $0.signOut() }
                session.router.finish(result: ["signedOut": true])
                return ["signedOut": true]
            }
        case "edit":
            unsaved = true
            return ["unsaved": true]
        case "save":
            unsaved = false
            return ["unsaved": false]
        default:
            throw ServiceError(.notFound, "home answers the actions signOut, edit and save")
        }
    }
}

await Service("shell")
    // Boot: the skin needs the gateway's session; the Launcher starts in the last phase.
    .bootTask("loadSkin", after: ["gateway.start"]) { _ in try await Task.sleep(for: .milliseconds(200)) }
    .app("launcher") { _ in LauncherApp() }
    .app("login", actions: ["signIn"]) { _ in LoginApp() }
    .app("home", actions: ["signOut", "edit", "save"]) { _ in HomeApp() }
    .main(about: "Hosts the micro-apps launcher (a coordinator), login and home.")
