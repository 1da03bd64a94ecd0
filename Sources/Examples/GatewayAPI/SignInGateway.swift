// The gateway's interface, shared by the gateway (which implements it) and its callers (which need
// only this module): a distributed actor protocol, resolved by service name.
import Distributed

/// Who is signed in, as the gateway tells it.
public struct SignInState: Codable, Sendable, Equatable {
    public var signedIn: Bool
    public var user: String?

    public init(signedIn: Bool, user: String? = nil) {
        self.signedIn = signedIn
        self.user = user
    }
}

/// The gateway refused a sign-in: who tried, and why.
public struct SignInRefused: Error, Codable, Sendable, Equatable, CustomStringConvertible {
    public var user: String
    public var reason: String

    public init(user: String, reason: String) {
        self.user = user
        self.reason = reason
    }

    public var description: String { reason }
}

/// The sign-in gateway (the coordinator article's Gateway): holds who is signed in.
///
/// ```swift
/// let gateway = try $SignInGateway.resolve(id: "gateway", using: context.actorSystem)
/// let state = try await gateway.signIn(user: "ada", password: "secret")
/// ```
@Resolvable
public protocol SignInGateway: DistributedActor where ActorSystem: DistributedActorSystem<any Codable> {
    /// Who is signed in now.
    distributed func state() async -> SignInState
    /// Signs `user` in; a wrong password throws ``SignInRefused``.
    distributed func signIn(user: String, password: String) async throws -> SignInState
    /// Signs out whoever is signed in.
    distributed func signOut() async
    /// Answers as soon as someone is signed in, or after `seconds` with the state then.
    distributed func waitForSignIn(seconds: Int) async throws -> SignInState
}
