import LifelineProtocol
import Testing

@testable import LifelineBroker

@Suite("Micro-app sessions on a host of several instances", .timeLimit(.minutes(1)))
struct AppInstanceTests {
    /// An instance `id` of the replicable host `shell`, offering the app `feed`.
    static func shell(_ id: String) -> JSONValue {
        var json = InstanceTests.instance("shell", id, methods: ["m"], idempotent: [], events: [])
            .objectValue!
        json["apps"] = ["feed"]
        return .object(json)
    }

    static func stack(_ broker: inout BrokerHarness) throws -> [SessionRecord] {
        let listed = broker.apps(["op": "list"])
        let reply = try #require(listed)
        return try (reply.json()["stack"]?.arrayValue ?? []).map { try SessionRecord(json: $0) }
    }

    @Test("each session lives on the instance hosting the fewest; its callbacks go to that process alone")
    func placement() throws {
        var broker = BrokerHarness()
        InstanceTests.join(&broker, "p1", Self.shell("i1"))
        InstanceTests.join(&broker, "p2", Self.shell("i2"))
        _ = broker.apps(["op": "start", "app": "feed"])
        #expect(broker.answerCallbacksWithPeers().map(\.peer) == ["p1", "p1", "p1"])
        let first = try #require(broker.replies(to: "cli").first).json()["session"]
        #expect(first?["instance"] == "i1")
        _ = broker.apps(["op": "start", "app": "feed"])
        #expect(
            broker.answerCallbacksWithPeers().map { "\($0.callback)@\($0.peer)" } == [
                "feed.didCreate@p2", "feed.willPause@p1", "feed.willStartLaunching@p2",
                "feed.didFinishLaunching@p2",
            ])
        _ = broker.apps(["op": "action", "session": "s1", "action": "refresh"])
        #expect(broker.answerCallbacksWithPeers().map(\.peer) == ["p1"])
        #expect(try Self.stack(&broker).map(\.instance) == ["i1", "i2"])
        let started = broker.published.filter { $0.name == .appDidStart }
        #expect(started.isEmpty, "the action started nothing")
    }

    @Test("an instance that stops cleanly hands its sessions to another; one that dies takes its own down")
    func departures() throws {
        var broker = BrokerHarness()
        InstanceTests.join(&broker, "p1", Self.shell("i1"))
        InstanceTests.join(&broker, "p2", Self.shell("i2"))
        for _ in 0..<2 {
            _ = broker.apps(["op": "start", "app": "feed"])
            _ = broker.answerCallbacks()
        }
        broker.request("p1", .unregister, ["name": "shell", "instance": "i1"])
        #expect(broker.answerCallbacksWithPeers().map { "\($0.callback)@\($0.peer)" } == ["feed.restore@p2"])
        #expect(try Self.stack(&broker).map(\.instance) == ["i2", "i2"])

        InstanceTests.join(&broker, "p3", Self.shell("i3"))
        _ = broker.apps(["op": "start", "app": "feed"])
        #expect(broker.answerCallbacksWithPeers().first?.peer == "p3", "i3 hosts none yet")
        broker.advance(milliseconds: 2000)
        broker.request("p2", .heartbeat, ["name": "shell"])
        broker.advance(milliseconds: 1500)  // p3 silent past its 3 s window
        let crashed = broker.published.filter { $0.name == .appDidCrash }.map {
            (try? JSONParser.parse($0.payload)) ?? .null
        }
        #expect(crashed == [["session": "s3", "app": "feed", "host": "shell", "instance": "i3"]])
        // s2, now on top again, resumes on its instance.
        #expect(
            broker.answerCallbacksWithPeers().map { "\($0.callback)@\($0.peer)" } == [
                "feed.willResume@p2", "feed.didResume@p2",
            ])
        #expect(try Self.stack(&broker).map(\.id) == ["s1", "s2"])
    }

    @Test(
        "after a broker restart each instance takes back its own sessions; those of an instance that does not come back go to one that does"
    )
    func restart() throws {
        var first = BrokerHarness { $0.stateDirectory = "/state" }
        InstanceTests.join(&first, "p1", Self.shell("i1"))
        InstanceTests.join(&first, "p2", Self.shell("i2"))
        var saved: JSONValue?
        for _ in 0..<2 {
            _ = first.apps(["op": "start", "app": "feed"])
            _ = first.answerCallbacks()
            for case .persist("sessions.json", let document) in first.output { saved = document }
        }
        let sessions = try #require(saved)
        var second = BrokerHarness()
        second.core = Broker(
            configuration: BrokerConfiguration(),
            identity: BrokerIdentity(pid: 2, host: "test", version: "test"),
            busEndpoints: ["tcp://127.0.0.1:9"], monotonic: second.instant, wall: 1_700_000_100_000_000_000,
            sessions: sessions)
        InstanceTests.join(&second, "q2", Self.shell("i2"))
        #expect(
            second.answerCallbacksWithPeers().map { "\($0.callback)@\($0.peer)" } == ["feed.restore@q2"],
            "i2 takes back s2 alone: i1 may still register again")
        second.advance(milliseconds: 2000)
        second.request("q2", .heartbeat, ["name": "shell"])
        second.advance(milliseconds: 1500)
        InstanceTests.join(&second, "q9", Self.shell("i9"))
        #expect(
            second.answerCallbacksWithPeers().map { "\($0.callback)@\($0.peer)" } == ["feed.restore@q9"],
            "i1 had its window: a new instance takes its session")
        let records = try Self.stack(&second)
        #expect(records.map(\.instance) == ["i9", "i2"], "\(records)")
    }
}
