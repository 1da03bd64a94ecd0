import GatewayAPI
import Lifeline
import LifelineProtocol
import LifelineTesting
import Testing

@testable import lifeline_gateway

@Suite(
    "lifeline-gateway's distributed actor against LifelineTesting's in-memory broker", .timeLimit(.minutes(1))
)
struct GatewayServiceTests {
    @Test("the actor answers through its protocol: a value, a Void func, and a refusal as its own type")
    func typedCalls() async throws {
        let host = try await ServiceTestHost(GatewayService.make())
        host.actorSystem.registerErrors(SignInRefused.self)
        let gateway = try $SignInGateway.resolve(id: "gateway", using: host.actorSystem)
        #expect(try await gateway.state() == SignInState(signedIn: false))
        await #expect(throws: SignInRefused(user: "ana", reason: Self.refusal)) {
            try await gateway.signIn(user: "ana", password: "x")
        }
        #expect(
            try await gateway.signIn(user: "ana", password: "secret")
                == SignInState(signedIn: true, user: "ana"))
        #expect(try await host.call("profile", service: "account") == ["user": "ana"])
        try await gateway.signOut()
        #expect(try await gateway.waitForSignIn(seconds: 0) == SignInState(signedIn: false))
        try await host.stop()
    }

    @Test("the same funcs by name with JSON arguments, as the CLI calls them; bad arguments are 400")
    func jsonCalls() async throws {
        let host = try await ServiceTestHost(GatewayService.make())
        #expect(
            try await host.call("signIn", ["user": "bo", "password": "secret"])
                == ["signedIn": true, "user": "bo"])
        #expect(try await host.call("signOut") == .null)
        #expect(try await host.call("state", .emptyObject) == ["signedIn": false])
        #expect(try await host.call("waitForSignIn", [0]) == ["signedIn": false], "an array is positional")
        for (body, message) in [
            (
                ["user": "bo", "pasword": "x"] as JSONValue,
                "signIn(user:password:) takes user, password; there is no argument 'pasword'; did you mean 'password'?"
            ),
            (["user": "bo"], "signIn(user:password:): cannot decode String at password: missing"),
            (
                ["user": "bo", "password": 5],
                "signIn(user:password:): cannot decode String at password: expected a string, found a number (5)"
            ),
            (
                "bo",
                "signIn(user:password:): the body must be an object of its arguments (user, password) or an array of them"
            ),
        ] {
            do {
                _ = try await host.call("signIn", body)
                Issue.record("\(body) was accepted")
            } catch let error as LifelineError {
                #expect(error.status == .badRequest && error.message == message, "\(error)")
            }
        }
        do {
            _ = try await host.call("signIn", ["user": "bo", "password": "x"])
            Issue.record("a short password was accepted")
        } catch let error as LifelineError {
            #expect(error.status.rawValue == 401 && error.message == Self.refusal)
            #expect(error.body["type"] == "GatewayAPI.SignInRefused")
            #expect(error.body["value"] == ["user": "bo", "reason": .string(Self.refusal)])
        }
        try await host.stop()
    }

    @Test("describe lists the distributed funcs with shapes from their types")
    func described() async throws {
        let host = try await ServiceTestHost(GatewayService.make())
        let methods = host.serviceDescription.methods
        #expect(methods.keys.sorted() == ["signIn", "signOut", "state", "waitForSignIn"])
        #expect(
            methods["signIn"]
                == ServiceDescription.Method(
                    summary: "distributed func signIn(user:password:)",
                    arguments: #"{"user": string, "password": string}"#,
                    reply: #"{"signedIn": boolean, "user"?: string}"#))
        #expect(methods["signOut"]?.arguments == "" && methods["signOut"]?.reply == "null")
        #expect(methods["waitForSignIn"]?.arguments == #"{"seconds": integer}"#)
        try await host.stop()
    }

    static let refusal = "wrong user or password (any user, a password of at least 4 characters)"
}
