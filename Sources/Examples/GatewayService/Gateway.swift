import Distributed
import GatewayAPI
import Lifeline

/// The gateway as a distributed actor: other processes resolve `gateway` and call it through
/// ``SignInGateway``; `lifeline call gateway signIn '{"user": …, "password": …}'` reaches the same funcs.
distributed actor Gateway: SignInGateway {
    typealias ActorSystem = LifelineActorSystem

    private let signIn: SignIn
    private let context: ServiceContext

    init(signIn: SignIn, context: ServiceContext) {
        self.signIn = signIn
        self.context = context
        self.actorSystem = context.actorSystem
    }

    distributed func state() async -> SignInState { await signIn.state }

    distributed func signIn(user: String, password: String) async throws -> SignInState {
        try await signIn.signIn(user: user, password: password)
        print("\(user) signed in")
        // While someone is signed in, this process also serves 'account' (registered at run time).
        try? await context.unregisterService("account")
        try await context.registerService(
            Service("account").method("profile") { _ in ["user": .string(user)] })
        return await signIn.state
    }

    distributed func signOut() async {
        await signIn.signOut()
        try? await context.unregisterService("account")
        print("signed out")
    }

    distributed func waitForSignIn(seconds: Int) async throws -> SignInState {
        let deadline = ContinuousClock.now + .seconds(max(0, seconds))
        while await signIn.user == nil, ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(25))
        }
        return await signIn.state
    }
}

/// A refused sign-in answers 401 (`lifeline call gateway signIn …` shows it); a Swift caller still
/// catches it as ``SignInRefused``.
extension SignInRefused: StatusReportingError {
    public var status: Status { Status(rawValue: 401) }
}
