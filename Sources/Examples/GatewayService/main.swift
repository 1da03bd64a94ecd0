// lifeline-gateway: holds the sign-in state (the coordinator article's Gateway) and guards starts:
// while nobody is signed in, starting `home` becomes starting `login`.
import Lifeline

/// Who is signed in.
actor SignIn {
    private(set) var user: String?

    func signIn(user: String, password: String) throws {
        guard !user.isEmpty, password.count >= 4 else {
            throw ServiceError(
                Status(rawValue: 401),
                "wrong user or password (any user, a password of at least 4 characters)")
        }
        self.user = user
    }

    func signOut() { user = nil }

    var state: JSONValue { ["signedIn": .bool(user != nil), "user": user.map { .string($0) } ?? .null] }
}

let signIn = SignIn()

await Service("gateway")
    // Boot: the keys come first (setup, required); the account migration runs once ever; the gateway
    // starts before the other services, which depend on it.
    .bootTask("loadKeys", phase: "setup", required: true) { _ in try await Task.sleep(for: .milliseconds(120))
    }
    .bootTask("migrateAccounts", phase: "runOnce", runOnce: true) { _ in
        try await Task.sleep(for: .milliseconds(80))
    }
    .startTask(priority: 100)
    .start { _ in try await Task.sleep(for: .milliseconds(150)) }
    .method("state") { _ in await signIn.state }
    .method("signIn") { request in
        try await signIn.signIn(
            user: request.body["user"]?.stringValue ?? "",
            password: request.body["password"]?.stringValue ?? "")
        let user = request.body["user"]?.stringValue ?? ""
        Console.out("gateway: \(user) signed in")
        // While someone is signed in, this process also serves 'account' (registered at run time).
        try? await request.context.unregisterService("account")
        try await request.context.registerService(
            Service("account").method("profile") { _ in ["user": .string(user)] })
        return await signIn.state
    }
    .method("signOut") { request in
        await signIn.signOut()
        try? await request.context.unregisterService("account")
        Console.out("gateway: signed out")
        return await signIn.state
    }
    .interceptStarts(priority: 10) { request, _ in
        guard request.app == "home", await signIn.user == nil else { return .allow }
        Console.out("gateway: nobody is signed in; starting login instead of home")
        return .change(app: "login", params: ["next": "home"])
    }
    .main(
        about:
            "Holds the sign-in state; methods state, signIn {user, password}, signOut; redirects home to login when signed out; while signed in it also serves 'account' (method profile)."
    )
