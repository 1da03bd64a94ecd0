import LifelineProtocol
import Testing

@testable import LifelineBroker

@Suite("Broker registry, lookup and heartbeats", .timeLimit(.minutes(1)))
struct RegistryTests {
    @Test("registering publishes serviceDidStart and lookup finds the record")
    func registerAndLookup() throws {
        var broker = BrokerHarness()
        let replyReply = broker.register("push", peer: "p1")
        let reply = try #require(replyReply)
        #expect(reply.status == .ok)
        #expect(broker.published.map(\.name) == [.serviceDidStart])
        #expect(try JSONParser.parse(broker.published[0].payload)["name"] == "push")
        broker.advance(milliseconds: 250)
        let foundReply = broker.request("cli", .lookup, ["name": "push"])
        let found = try #require(foundReply)
        let record = try ServiceRecord(json: found.json())
        #expect(record.name == "push")
        #expect(record.registration.methods == ["status"])
        #expect(record.uptimeMilliseconds == 250)
        let missingReply = broker.request("cli", .lookup, ["name": "nope"])
        let missing = try #require(missingReply)
        #expect(missing.status == .notFound)
        #expect(missing.errorMessage == "no service named 'nope'")
    }

    @Test("registration waits for the service's bus subscription, and times out without it")
    func registrationWaitsForMarker() throws {
        var broker = BrokerHarness()
        let step1 = broker.request("p1", .register, BrokerHarness.registration("push"))
        #expect(step1 == nil)
        broker.subscribeMarker("push-1")
        #expect(broker.replies(to: "p1").first?.status == .ok)
        let step2 = broker.request("p2", .register, BrokerHarness.registration("late"))
        #expect(step2 == nil)
        broker.advance(milliseconds: 5001)
        let timeout = try #require(broker.replies(to: "p2").first)
        #expect(timeout.status == .timeout)
        #expect(timeout.errorMessage.contains("bus subscription '!late-1' did not arrive within 5000 ms"))
    }

    @Test("a taken name is refused while its owner lives; the owner may re-register after a reconnect")
    func uniqueNames() throws {
        var broker = BrokerHarness()
        broker.register("push", peer: "p1", instance: "a")
        let refusedReply = broker.register("push", peer: "p2", instance: "b")
        let refused = try #require(refusedReply)
        #expect(refused.status == .conflict)
        #expect(refused.errorMessage.contains("already registered by pid 100 on host 'h'"))
        let renewedReply = broker.register("push", peer: "p3", instance: "a")
        let renewed = try #require(renewedReply)
        #expect(renewed.status == .ok)
        #expect(broker.published.isEmpty, "a renewal publishes nothing new")
        broker.request("cli", .call, ["service": "push", "method": "status"])
        #expect(broker.requests(to: "p3").first?.command == .call, "calls go to the new connection")
    }

    @Test("a name belongs to the key that registered it; without keys, to its connection or the same process")
    func ownership() {
        let registration = ServiceRegistration(
            name: "svc", instance: "i1", pid: 7, host: "h", events: [], methods: [], attachToken: "t")
        var keyed = ServiceRegistry()
        #expect(keyed.admit(registration, peer: [1], owner: "KEY-A", now: 0) == .added)
        #expect(keyed.admit(registration, peer: [2], owner: "KEY-B", now: 1) == .foreign(owner: "KEY-A"))
        #expect(keyed.entry(named: "svc")?.peer == [1], "whatever it quotes, another key changes nothing")
        #expect(keyed.admit(registration, peer: [3], owner: "KEY-A", now: 2) == .renewed)
        #expect(keyed.entry(named: "svc")?.peer == [3])
        var another = registration
        another.instance = "i2"
        guard case .refused = keyed.admit(another, peer: [4], owner: "KEY-A", now: 3) else {
            Issue.record("another instance of the same key is refused while the name lives")
            return
        }

        var plain = ServiceRegistry()
        #expect(plain.admit(registration, peer: [1], now: 0) == .added)
        var forged = registration
        forged.pid = 8
        guard case .refused = plain.admit(forged, peer: [2], now: 1) else {
            Issue.record("the instance id alone does not take a name over")
            return
        }
        #expect(plain.admit(registration, peer: [2], now: 2) == .renewed, "the same process coming back")
    }

    @Test("a silent service expires after interval × liveness and serviceDidStop is published")
    func expiry() throws {
        var broker = BrokerHarness()
        broker.register(
            "push", peer: "p1", heartbeat: HeartbeatSettings(intervalMilliseconds: 100, liveness: 3))
        broker.advance(milliseconds: 250)
        broker.request("p1", .heartbeat)
        broker.advance(milliseconds: 250)
        #expect(broker.core.serviceCount == 1)
        broker.advance(milliseconds: 51)
        #expect(broker.core.serviceCount == 0)
        #expect(broker.published.map(\.name) == [.serviceDidStop])
        #expect(try JSONParser.parse(broker.published[0].payload) == ["name": "push", "reason": "expired"])
    }

    @Test(
        "a broker that was not running does not count that time as its services' silence: none expires when it resumes, a silent one a window later"
    )
    func ownAbsence() throws {
        var broker = BrokerHarness()
        let heartbeat = HeartbeatSettings(intervalMilliseconds: 100, liveness: 3)
        broker.register("push", peer: "p1", heartbeat: heartbeat)
        broker.register("rates", peer: "p2", heartbeat: heartbeat)
        broker.advance(milliseconds: 200)
        broker.pause(milliseconds: 5000)
        #expect(broker.core.serviceCount == 2, "their heartbeats may wait unread in the broker's socket")
        #expect(broker.published.isEmpty)
        broker.advance(milliseconds: 150)
        broker.request("p1", .heartbeat)  // read once the broker runs again; rates stays silent
        broker.advance(milliseconds: 150)
        #expect(broker.core.serviceCount == 2)
        broker.advance(milliseconds: 1)
        #expect(broker.core.serviceCount == 1)
        #expect(try JSONParser.parse(broker.published[0].payload) == ["name": "rates", "reason": "expired"])
        // Excused once between two heartbeats: a dead service expires after the next absence.
        broker.request("p1", .heartbeat)
        broker.pause(milliseconds: 5000)
        #expect(broker.core.serviceCount == 1)
        broker.pause(milliseconds: 5000)
        #expect(broker.core.serviceCount == 0)
        // A tick less than 100 ms later than the loop meant is no absence: silence counts in full.
        broker.register("push", peer: "p3", heartbeat: heartbeat)
        broker.advance(milliseconds: 1000)
        broker.request("p3", .heartbeat)
        broker.pause(milliseconds: 1090)
        #expect(broker.core.serviceCount == 0)
    }

    @Test(
        "an absence is a tick later than the loop meant it (the deadline it waited for) by more than 100 ms, though within the broker's interval; 50 ms late is none"
    )
    func lateTick() {
        var broker = BrokerHarness()
        let heartbeat = HeartbeatSettings(intervalMilliseconds: 100, liveness: 3)
        broker.register("push", peer: "p1", heartbeat: heartbeat)
        broker.advance(milliseconds: 100)
        _ = broker.core.nextDeadline()  // the loop waits for push's expiry, 200 ms on
        broker.pause(milliseconds: 400)
        #expect(broker.core.serviceCount == 1, "200 ms late: its heartbeats may wait unread")
        broker.request("p1", .heartbeat)
        _ = broker.core.nextDeadline()
        broker.pause(milliseconds: 350)
        #expect(broker.core.serviceCount == 0, "50 ms late: silent for 350 ms, past its 300")
    }

    @Test(
        "after an absence of the broker, a taken name is refused with the time until its holder really expires"
    )
    func retryAfterAbsence() throws {
        var broker = BrokerHarness()
        let heartbeat = HeartbeatSettings(intervalMilliseconds: 100, liveness: 3)
        broker.register("push", peer: "p1", heartbeat: heartbeat)
        broker.advance(milliseconds: 200)
        broker.pause(milliseconds: 5000)
        var successor = BrokerHarness.registration("push", instance: "push-2", heartbeat: heartbeat)
            .objectValue!
        successor["pid"] = 101
        broker.subscribeMarker("push-2")
        let answer = broker.request("p2", .register, .object(successor))
        let reply = try #require(answer)
        #expect(reply.status == .conflict)
        #expect(try reply.json()["retryAfterMs"] == 300, "the holder was given a whole window at the absence")
        broker.advance(milliseconds: 301)
        #expect(broker.core.serviceCount == 0)
    }

    @Test("the broker heartbeats its services every interval and disconnects unknown heartbeaters")
    func brokerHeartbeats() {
        var broker = BrokerHarness()
        broker.register("push", peer: "p1")
        broker.advance(milliseconds: 999)
        #expect(broker.requests(to: "p1").isEmpty)
        broker.advance(milliseconds: 1)
        #expect(broker.requests(to: "p1").map(\.command) == [.heartbeat])
        broker.request("stranger", .heartbeat)
        #expect(broker.requests(to: "stranger").map(\.command) == [.disconnect])
    }

    @Test("only the owner may unregister; unregistering publishes serviceDidStop")
    func unregister() throws {
        var broker = BrokerHarness()
        broker.register("push", peer: "p1")
        let step3 = broker.request("p2", .unregister, ["name": "push"])
        #expect(step3?.status == .forbidden)
        let step4 = broker.request("p1", .unregister, ["name": "push"])
        #expect(step4?.status == .ok)
        #expect(
            try JSONParser.parse(broker.published[0].payload) == ["name": "push", "reason": "unregistered"])
        let step5 = broker.request("p1", .unregister, ["name": "push"])
        #expect(step5?.status == .notFound)
    }

    @Test("LIST reports every service sorted by name")
    func list() throws {
        var broker = BrokerHarness()
        broker.register("zeta", peer: "p1")
        broker.register("alpha", peer: "p2")
        let replyReply = broker.request("cli", .list)
        let reply = try #require(replyReply)
        let names = try reply.json()["services"]?.arrayValue?.compactMap { $0["name"]?.stringValue }
        #expect(names == ["alpha", "zeta"])
    }

    @Test("ATTACH answers once the marker subscription has been seen")
    func attach() {
        var broker = BrokerHarness()
        let step6 = broker.request("tail", .attach, ["token": "t1"])
        #expect(step6 == nil)
        broker.subscribeMarker("t1")
        #expect(broker.replies(to: "tail").first?.status == .ok)
        let step7 = broker.request("tail2", .attach, ["token": "t1"])
        #expect(step7?.status == .ok)
    }
}

@Suite("Heartbeats that name their service")
struct NamedHeartbeatTests {
    @Test(
        "a connection whose own service the broker lost is told to register again, even if it holds other names"
    )
    func lostRegistration() {
        var broker = BrokerHarness()
        broker.register("account", peer: "gw")
        broker.request("gw", .heartbeat, ["name": "account"])
        #expect(broker.requests(to: "gw").isEmpty, "it holds its name: nothing to say")
        broker.request("gw", .heartbeat, ["name": "gateway"])
        #expect(broker.requests(to: "gw").map(\.command) == [.disconnect], "its own name is not registered")
    }
}
