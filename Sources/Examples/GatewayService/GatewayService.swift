import Lifeline

/// lifeline-gateway's service, made here so that a test can run it against LifelineTesting's
/// in-memory broker (`Tests/ExampleTests`): it holds the sign-in state (as the ``Gateway`` actor)
/// and guards starts: while nobody is signed in, starting `home` becomes starting `login`.
enum GatewayService {
    static func make() -> Service {
        let signIn = SignIn()
        return Service("gateway")
            // Boot: the keys come first (setup, required); the account migration runs once ever; the
            // gateway starts before the other services, which depend on it.
            .bootTask("loadKeys", phase: "setup", required: true) { _ in
                try await Task.sleep(for: .milliseconds(120))
            }
            .bootTask("migrateAccounts", phase: "runOnce", runOnce: true) { _ in
                try await Task.sleep(for: .milliseconds(80))
            }
            .startTask(priority: 100)
            .start { _ in try await Task.sleep(for: .milliseconds(150)) }
            .actor { context in Gateway(signIn: signIn, context: context) }
            .interceptStarts(priority: 10) { request, _ in
                guard request.app == "home", await signIn.user == nil else { return .allow }
                print("nobody is signed in; starting login instead of home")
                return .change(app: "login", params: ["next": "home"])
            }
    }
}
