import Foundation
import GatewayAPI
import Lifeline
import LifelineProtocol
import Synchronization
import Testing
import ZeroMQ

/// This test process has the gateway's protocol (GatewayAPI) and not its implementation, which runs in
/// the `lifeline-gateway` process: every call below crosses the broker.
@Suite("Distributed actors between real processes", .serialized, .timeLimit(.minutes(2)))
struct ActorProcessTests {
    static let refusal = "wrong user or password (any user, a password of at least 4 characters)"

    @Test(
        "a caller with only the protocol module calls the gateway: a value, a Void func, a typed error; the CLI calls the same funcs by name; STATS counts them per method"
    )
    func callsThroughTheProtocol() async throws {
        let broker = try await BrokerProcess()
        defer { broker.process.kill() }
        let gatewayProcess = try await broker.service("lifeline-gateway")
        defer { gatewayProcess.kill() }
        let client = LifelineClient(broker: broker.control, credentials: nil)
        let gateway = try $SignInGateway.resolve(
            id: "gateway", using: LifelineActorSystem(client: client, errors: [SignInRefused.self]))

        #expect(try await gateway.state() == SignInState(signedIn: false))
        await #expect(throws: SignInRefused(user: "ana", reason: Self.refusal)) {
            try await gateway.signIn(user: "ana", password: "x")
        }
        #expect(
            try await gateway.signIn(user: "ana", password: "secret")
                == SignInState(signedIn: true, user: "ana"))
        try await gateway.signOut()
        #expect(try await gateway.state() == SignInState(signedIn: false))

        let described = try await broker.cli(["describe", "gateway"])
        #expect(
            described.stdout.contains(
                #"  signIn — distributed func signIn(user:password:) (takes {"user": string, "password": string}, answers {"signedIn": boolean, "user"?: string})"#
            ), "\(described.output)")
        #expect(described.stdout.contains("  signOut — distributed func signOut() (answers null)"))
        let call = try await broker.cli([
            "call", "gateway", "signIn", #"{"user": "bo", "password": "secret"}"#,
        ])
        #expect(call.status == 0 && call.output == #"{"signedIn":true,"user":"bo"}"#, "\(call.output)")
        #expect(try await gateway.state() == SignInState(signedIn: true, user: "bo"))
        let refused = try await broker.cli(["call", "gateway", "signIn", #"{"user": "bo", "password": "x"}"#])
        #expect(
            refused.status == 1 && refused.errors.contains("failed with 401 unauthorized: \(Self.refusal)"),
            "\(refused.errors)")
        let misspelt = try await broker.cli(["call", "gateway", "signIn", #"{"user": "bo", "pasword": "x"}"#])
        #expect(misspelt.errors.contains("there is no argument 'pasword'; did you mean 'password'?"))

        let stats = try JSONParser.parse(try await broker.cli(["stats", "gateway", "--json"]).output)
        let signIn = stats["services"]?["gateway"]?["methods"]?["signIn"]
        #expect(signIn?["requests"]?.intValue == 5, "\(stats)")
        #expect(signIn?["errors"]?.intValue == 3, "the two refusals and the misspelt argument: \(stats)")
        await client.close()
    }

    @Test("a bare DEALER calls the actor's funcs with the frames PROTOCOL.md gives, as a pyzmq client would")
    func rawFrames() async throws {
        let broker = try await BrokerProcess()
        defer { broker.process.kill() }
        let gatewayProcess = try await broker.service("lifeline-gateway")
        defer { gatewayProcess.kill() }
        func call(_ id: String, _ method: String, _ body: String) -> [[UInt8]] {
            [
                Array("LLC01".utf8), Array("CALL".utf8), Array(id.utf8),
                Array(#"{"service": "gateway", "method": "\#(method)", "timeoutMs": 5000}"#.utf8),
                Array(body.utf8),
            ]
        }
        let replies = try RawPeer.exchange(
            with: broker.control,
            messages: [
                call("1", "signIn", #"{"user": "cy", "password": "secret"}"#),
                call("2", "signIn", #"{"user": "cy", "password": "x"}"#),
                call("3", "waitForSignIn", "[0]"),
                call("4", "signOut", ""),
                call("5", "state", "{}"),
            ])
        let answers = try replies.map { reply -> (String, String, JSONValue) in
            guard reply.count == 5, reply[0] == Array("LLC01".utf8), reply[1] == Array("REPLY".utf8) else {
                throw HarnessError("not a REPLY: \(reply.count) frames")
            }
            return (
                String(decoding: reply[2], as: UTF8.self), String(decoding: reply[3], as: UTF8.self),
                try JSONParser.parse(reply[4])
            )
        }
        #expect(answers.map(\.0) == ["1", "2", "3", "4", "5"])
        #expect(answers.map(\.1) == ["200", "401", "200", "200", "200"])
        #expect(answers[0].2 == ["signedIn": true, "user": "cy"])
        #expect(
            answers[1].2["error"] == .string(Self.refusal)
                && answers[1].2["type"] == "GatewayAPI.SignInRefused"
                && answers[1].2["value"] == ["user": "cy", "reason": .string(Self.refusal)])
        #expect(answers[2].2 == ["signedIn": true, "user": "cy"], "an array is the arguments in order")
        #expect(answers[3].2 == .null, "a func that returns nothing answers null")
        #expect(answers[4].2 == ["signedIn": false])
    }

    @Test("a name nobody serves fails at once with notFound; a call's own deadline ends it with timeout")
    func notFoundAndDeadline() async throws {
        let broker = try await BrokerProcess()
        defer { broker.process.kill() }
        let gatewayProcess = try await broker.service("lifeline-gateway")
        defer { gatewayProcess.kill() }
        let client = LifelineClient(broker: broker.control, credentials: nil)
        let actors = LifelineActorSystem(client: client, timeout: .seconds(30))
        let nobody = try $SignInGateway.resolve(id: "nobody", using: actors)
        do {
            _ = try await nobody.state()
            Issue.record("a name nobody serves answered")
        } catch let error as LifelineError {
            #expect(error.code == .notFound && error.message == "no service named 'nobody'", "\(error)")
        }
        let gateway = try $SignInGateway.resolve(id: "gateway", using: actors)
        do {
            _ = try await LifelineActorSystem.withTimeout(.milliseconds(300)) {
                try await gateway.waitForSignIn(seconds: 10)
            }
            Issue.record("the wait outlived its deadline")
        } catch let error as LifelineError {
            #expect(error.code == .timeout, "\(error)")
            #expect(error.message.contains("gateway.waitForSignIn did not answer within 300 ms"), "\(error)")
        }
        #expect(try await gateway.state() == SignInState(signedIn: false), "the gateway goes on")
        await client.close()
    }

    @Test(
        "the gateway killed -9 and restarted three times while a caller loops: the call in flight and the calls of the outage fail with a LifelineError, never hang; the calls after it succeed"
    )
    func hostKilledAndRestarted() async throws {
        let broker = try await BrokerProcess()
        defer { broker.process.kill() }
        let heartbeat = ["--heartbeat-interval", "200", "--liveness", "3"]
        var gatewayProcess = try await broker.service("lifeline-gateway", heartbeat)
        defer { gatewayProcess.kill() }
        let client = LifelineClient(broker: broker.control, credentials: nil)
        let actors = LifelineActorSystem(client: client, timeout: .seconds(2))
        let gateway = try $SignInGateway.resolve(id: "gateway", using: actors)

        let outcomes = Outcomes()
        let looping = Task {
            while !Task.isCancelled {
                do {
                    _ = try await gateway.state()
                    outcomes.append("ok")
                } catch let error as LifelineError {
                    outcomes.append("\(error.code)")
                    try? await Task.sleep(for: .milliseconds(50))
                } catch is CancellationError {
                    break  // the loop's task was cancelled: its call in flight ends at once
                } catch {
                    outcomes.append("unexpected \(type(of: error)): \(error)")
                }
            }
        }
        for round in 1...3 {
            // A long call in flight: the quick call after it on the same connection answers only after
            // the broker has forwarded the long one to the gateway.
            let waiting = Task {
                try await LifelineActorSystem.withTimeout(.seconds(30)) {
                    try await gateway.waitForSignIn(seconds: 25)
                }
            }
            #expect(try await gateway.state() == SignInState(signedIn: false))
            let start = outcomes.all.count
            try await outcomes.wait { $0[start...].filter { $0 == "ok" }.count >= 5 }
            gatewayProcess.kill()
            let killed = ContinuousClock.now
            do {
                _ = try await waiting.value
                Issue.record("the call in flight answered after its host was killed")
            } catch let error as LifelineError {
                #expect(
                    error.code == .unavailable, "the host's death, not the 30 s deadline, ended it: \(error)")
                print(
                    "actor host killed (round \(round)): the call in flight failed after \(ContinuousClock.now - killed): \(error)"
                )
            }
            let beforeRestart = outcomes.all.count
            try await outcomes.wait { $0[beforeRestart...].contains { $0 != "ok" } }
            gatewayProcess = try await broker.service("lifeline-gateway", heartbeat)
        }
        let restarted = outcomes.all.count
        try await outcomes.wait { $0[restarted...].filter { $0 == "ok" }.count >= 5 }
        looping.cancel()
        _ = await looping.value
        let all = outcomes.all
        let failures = all.filter { $0 != "ok" }
        print(
            "actor host killed and restarted: \(all.count) calls, \(failures.count) failed (\(Set(failures).sorted()))"
        )
        #expect(
            failures.allSatisfy { ["notFound", "unavailable", "timeout"].contains($0) }, "\(Set(failures))")
        #expect(!failures.isEmpty && all.last == "ok")
        #expect(try await gateway.state() == SignInState(signedIn: false), "a new actor, a new state")
        await client.close()
    }
}

/// What a caller's loop got from each call, with a signal at each one, so a test waits on the calls
/// themselves instead of polling a list.
final class Outcomes: Sendable {
    private let list = Mutex<[String]>([])
    private let changes: AsyncStream<Void>
    private let changed: AsyncStream<Void>.Continuation

    init() { (changes, changed) = AsyncStream.makeStream(bufferingPolicy: .bufferingNewest(1)) }

    func append(_ outcome: String) {
        list.withLock { $0.append(outcome) }
        changed.yield()
    }

    var all: [String] { list.withLock { $0 } }

    /// Returns once `condition` holds of the outcomes so far, checked at each new outcome.
    /// - Throws: ``HarnessError`` when it does not within 15 s.
    func wait(until condition: ([String]) -> Bool) async throws {
        let deadline = ContinuousClock.now + .seconds(15)
        // Wakes the wait at the deadline even when no call ends.
        let alarm = Task { [changed] in
            try? await Task.sleep(until: deadline)
            changed.yield()
        }
        defer { alarm.cancel() }
        if condition(all) { return }
        for await _ in changes {
            if condition(all) { return }
            guard ContinuousClock.now < deadline else { break }
        }
        throw HarnessError("the calls did not reach the expected outcomes within 15 s: \(all.suffix(10))")
    }
}
