import Foundation
import Lifeline
import LifelineCLI
import LifelineProtocol
import Testing
import ZeroMQ

@Suite(
    "Real processes over CURVE: the allow-list, per-key grants, reloads", .serialized, .timeLimit(.minutes(2))
)
struct SecurityTests {
    static let admin: JSONValue = [
        "register": ["*"], "publish": ["*"], "subscribe": ["*"], "call": ["*"], "admin": true,
    ]

    /// The number of requests the broker has let through, as HELLO says.
    static func requests(_ client: BlockingClient) throws -> Int64? {
        try client.request(.hello, timeout: .seconds(5)).json()["requests"]?.intValue
    }

    @Test(
        "an unknown key and a plain-text client get nothing through: not one request reaches the broker's logic"
    )
    func strangersGetNothing() async throws {
        let keys = try SecuritySetup(keys: ["ops", "intruder"])
        defer { keys.remove() }
        try keys.writePolicy(["ops": Self.admin])
        let broker = try await BrokerProcess(keys.brokerArguments)
        defer { broker.process.kill() }
        let ops = try blockingClient(broker: broker.control, credentials: keys.credentials("ops"))
        #expect(try ops.request(.hello).json()["curve"] == true)
        let before = try #require(try Self.requests(ops))

        let intruder = try blockingClient(broker: broker.control, credentials: keys.credentials("intruder"))
        #expect(throws: LifelineError.self) { try intruder.hello(timeout: .milliseconds(800)) }
        #expect(throws: LifelineError.self) {
            _ = try intruder.publish("didBecomeActive", timeout: .milliseconds(300))
        }
        let plain = try blockingClient(broker: broker.control, credentials: nil)
        #expect(throws: LifelineError.self) { try plain.hello(timeout: .milliseconds(800)) }
        #expect(
            try RawPeer.exchange(with: broker.control, messages: Array(RawPeer.garbage.prefix(2))).allSatisfy
            {
                $0.isEmpty
            }, "garbage in plain text gets no answer at all")
        try await broker.process.waitForLine(.stderr) {
            $0.contains("refused a CURVE handshake") && $0.contains("is not on the allow-list")
        }
        #expect(try Self.requests(ops) == before + 1, "only our own HELLO was processed")
    }

    @Test(
        "a Swift client without a key publishes to a CURVE broker: the publish fails with the handshake's sentence, not after its time-out (300 s here, past the suite's limit)"
    )
    func publishWithoutAKeyFailsAtOnce() async throws {
        let keys = try SecuritySetup(keys: ["ops"])
        defer { keys.remove() }
        try keys.writePolicy(["ops": Self.admin])
        let broker = try await BrokerProcess(keys.brokerArguments)
        defer { broker.process.kill() }
        let plain = LifelineClient(broker: broker.control, credentials: nil)
        let started = ContinuousClock.now
        for acknowledged in [false, true] {
            await #expect {
                try await plain.publish(
                    "com.example.x", ["k": 1], acknowledged: acknowledged, timeout: .seconds(300))
            } throws: {
                "\($0)".contains("the security handshake with the broker at \(broker.control) failed")
            }
        }
        await plain.close()
        print("two publishes without a key to a CURVE broker failed after \(ContinuousClock.now - started)")
    }

    @Test("malformed input from an authenticated peer still gets a clear 4xx, and the broker goes on")
    func authenticatedGarbage() async throws {
        let keys = try SecuritySetup(keys: ["ops"])
        defer { keys.remove() }
        try keys.writePolicy(["ops": Self.admin])
        let broker = try await BrokerProcess(keys.brokerArguments)
        defer { broker.process.kill() }
        let credentials = try keys.credentials("ops")
        let replies = try RawPeer.exchange(
            with: broker.control, messages: Array(RawPeer.garbage.dropFirst()),
            curve: (credentials.keys, credentials.brokerKey))
        let statuses = replies.map { reply in reply.count > 3 ? String(decoding: reply[3], as: UTF8.self) : ""
        }
        #expect(statuses.allSatisfy { $0.hasPrefix("4") || $0 == "505" }, "\(statuses)")
        let ops = try blockingClient(broker: broker.control, credentials: credentials)
        #expect(try ops.hello().epoch > 0, "and the broker still serves")
    }

    @Test("a service may register only the names its rule lists: 403 naming the key, the action and the rule")
    func registrationOutsideTheRule() async throws {
        let keys = try SecuritySetup(keys: ["ops", "gw"])
        defer { keys.remove() }
        try keys.writePolicy(["ops": Self.admin, "gw": ["register": ["account"], "call": ["*"]]])
        let broker = try await BrokerProcess(keys.brokerArguments)
        defer { broker.process.kill() }
        let gateway = try ChildProcess(
            "lifeline-gateway", ["--broker", broker.control] + keys.keyArguments("gw"))
        defer { gateway.kill() }
        let status = try await gateway.waitForExit(seconds: 15)
        await gateway.waitForOutputToEnd()
        #expect(status != 0, "a refused service stops")
        #expect(
            gateway.lines(.stderr).contains {
                $0.contains("key 'gw' may not register 'gateway': its rule 'register' is [account]")
            })
        try await broker.process.waitForLine(.stderr) {
            $0.contains("denied REGISTER") && $0.contains("'gw'")
        }
        let ops = try blockingClient(broker: broker.control, credentials: keys.credentials("ops"))
        #expect(try ops.services().isEmpty)
        let published = try ops.send(.publish(PublishRequest(event: "x.y", payload: Array("{}".utf8))))
        #expect(published.status.isSuccess, "the admin key may publish")
    }

    @Test(
        "a subscriber receives only the events its key may read; what it may not read is refused, logged and named in its ATTACH reply"
    )
    func subscriptionsFollowTheRule() async throws {
        let keys = try SecuritySetup(keys: ["ops", "reader"])
        defer { keys.remove() }
        try keys.writePolicy(["ops": Self.admin, "reader": ["subscribe": ["com.example.public.*"]]])
        let broker = try await BrokerProcess(keys.brokerArguments)
        defer { broker.process.kill() }
        let reader = try blockingClient(broker: broker.control, credentials: keys.credentials("reader"))
        let subscriber = try reader.subscribe(to: ["com.example.secret.plans", "com.example.public.news"])
        try await broker.process.waitForLine(.stderr) {
            $0.contains(
                "refused a bus subscription: key 'reader' may not subscribe to 'com.example.secret.plans': its rule 'subscribe' is [com.example.public.*]"
            )
        }
        #expect(
            subscriber.refused == [
                "key 'reader' may not subscribe to 'com.example.secret.plans': its rule 'subscribe' is [com.example.public.*]"
            ], "its ATTACH reply says what was refused")
        let everything = try reader.subscribe(to: nil)
        try await broker.process.waitForLine(.stderr) {
            $0.contains("key 'reader' may not subscribe to '*'")
        }
        #expect(
            everything.refused == [
                "key 'reader' may not subscribe to '*': its rule 'subscribe' is [com.example.public.*]"
            ])
        let tail = try await CLIResult.run(
            ["tail", "com.example.public.news", "com.example.secret.plans", "--broker", broker.control]
                + keys.keyArguments("reader"))
        #expect(tail.status == 1)
        #expect(
            tail.errors.contains(
                "the broker refused this subscription: key 'reader' may not subscribe to 'com.example.secret.plans'"
            ),
            "\(tail.errors)")
        let ops = try blockingClient(broker: broker.control, credentials: keys.credentials("ops"))
        _ = try ops.publish("com.example.secret.plans")
        _ = try ops.publish("com.example.public.news")
        _ = try ops.publish("com.example.secret.plans")
        _ = try ops.publish("com.example.public.news")
        var received: [String] = []
        while received.count < 2, let event = try subscriber.next(timeout: .seconds(5)) {
            received.append(event.name.rawValue)
        }
        #expect(received == ["com.example.public.news", "com.example.public.news"])
        let replay = try reader.send(
            .replay(ReplayRequest(after: 0, epoch: 0, events: ["com.example.secret.plans"])))
        #expect(replay.status == .forbidden, "nor may it read them from the journal")
        let publish = try reader.send(
            .publish(PublishRequest(event: "com.example.public.news", payload: Array("{}".utf8))))
        #expect(publish.status == .forbidden)
        #expect(
            publish.errorMessage
                == "key 'reader' may not publish 'com.example.public.news': its rule 'publish' is [] (nothing)"
        )
    }

    @Test(
        "a key removed from the policy is cut off at the reload (SIGHUP): its services dropped, its connections closed"
    )
    func reloadCutsOff() async throws {
        let keys = try SecuritySetup(keys: ["ops", "gw", "reader"])
        defer { keys.remove() }
        let reading: JSONValue = ["subscribe": ["com.example.*"]]
        try keys.writePolicy([
            "ops": Self.admin,
            "gw": ["register": ["gateway", "account"], "subscribe": ["*"], "call": ["*"]],
            "reader": reading,
        ])
        let broker = try await BrokerProcess(keys.brokerArguments)
        defer { broker.process.kill() }
        let gateway = try await broker.service("lifeline-gateway", keys.keyArguments("gw"))
        defer { gateway.kill() }
        let reader = try blockingClient(broker: broker.control, credentials: keys.credentials("reader"))
        let subscriber = try reader.subscribe(to: ["com.example.news"])
        let ops = try blockingClient(broker: broker.control, credentials: keys.credentials("ops"))
        _ = try ops.publish("com.example.news")
        #expect(try subscriber.next(timeout: .seconds(5))?.name == "com.example.news")

        try keys.writePolicy(["ops": Self.admin])
        broker.process.kill(SIGHUP)
        try await broker.process.waitForLine(.stderr) {
            $0.contains("reloaded") && $0.contains("removed gw, reader")
        }
        #expect(try ops.services().isEmpty, "the gateway was dropped")
        try await broker.process.waitForLine(.stderr) {
            $0.contains("refused a CURVE handshake") && $0.contains("is not on the allow-list")
        }
        _ = try ops.publish("com.example.news")
        #expect(
            try subscriber.next(timeout: .milliseconds(1500)) == nil, "the reader's bus connection is closed")
        #expect(throws: LifelineError.self) { try reader.hello(timeout: .milliseconds(800)) }
        #expect(try ops.services().isEmpty, "nor could the gateway register again")
    }

    @Test(
        "keys new writes a 0600 key pair; a secret key others may read is refused; plain text off loopback needs --insecure"
    )
    func keyFilesAndLoopback() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "lifeline-keys-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let made = try await CLIResult.run(["keys", "new", "ops", "--dir", directory.path])
        #expect(made.status == 0)
        let secret = directory.appendingPathComponent("ops.key").path
        let attributes = try FileManager.default.attributesOfItem(atPath: secret)
        #expect((attributes[.posixPermissions] as? Int) == 0o600)
        let again = try await CLIResult.run(["keys", "new", "ops", "--dir", directory.path])
        #expect(again.status == 1 && again.errors.contains("exists already"))
        chmod(secret, 0o644)
        let loose = try await CLIResult.run([
            "status", "--key", secret, "--broker-key", directory.appendingPathComponent("ops.pub").path,
        ])
        #expect(
            loose.status == 2
                && loose.errors.contains("may be read by others than its owner (mode 644); run chmod 600"))

        let exposed = try await CLIResult.run([
            "broker", "--control", "tcp://0.0.0.0:*", "--bus", "tcp://127.0.0.1:*",
        ])
        #expect(
            exposed.status == 2 && exposed.errors.contains("refusing to bind tcp://0.0.0.0:* in plain text"))
        let allowed = try await BrokerProcess(control: "tcp://0.0.0.0:*", ["--insecure"])
        allowed.process.kill()
        let noKey = try await CLIResult.run(["broker", "--policy", "/nonexistent.json"])
        #expect(noKey.status == 2 && noKey.errors.contains("--policy needs --key"))
    }
}
