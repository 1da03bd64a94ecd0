import LifelineProtocol
import Testing

@testable import LifelineBroker

@Suite("Acknowledged broadcast", .timeLimit(.minutes(1)))
struct AcknowledgementTests {
    @Test("must-not-miss events wait for every subscriber and report who acknowledged")
    func allAcknowledge() throws {
        var broker = BrokerHarness()
        broker.register("a", peer: "pa", events: [.didReceiveMemoryWarning])
        broker.register("b", peer: "pb", events: [.didReceiveMemoryWarning])
        let step1 = broker.request("cli", .publish, ["event": "didReceiveMemoryWarning"])
        #expect(step1 == nil, "the publisher waits")
        let event = try #require(broker.published.first)
        #expect(event.header.flags & 1 == 1)
        broker.request("pa", .ack, ["sequence": .int(Int64(event.header.sequence)), "name": "a"])
        #expect(broker.replies(to: "cli").isEmpty)
        broker.request(
            "pb", .ack, ["sequence": .int(Int64(event.header.sequence)), "name": "b", "error": "disk full"])
        let reply = try #require(broker.replies(to: "cli").first)
        #expect(try reply.json()["acknowledged"] == ["a"])
        #expect(try reply.json()["failed"] == [["service": "b", "error": "disk full"]])
        #expect(try reply.json()["missing"] == [])
    }

    @Test("a subscriber that dies or stays silent is reported missing, on time")
    func missingSubscribers() throws {
        var broker = BrokerHarness()
        broker.register(
            "dies", peer: "pd", events: [.willTerminate],
            heartbeat: HeartbeatSettings(intervalMilliseconds: 100, liveness: 2))
        broker.register("silent", peer: "ps", events: [.willTerminate])
        broker.request("cli", .publish, ["event": "willTerminate", "force": true, "timeoutMs": 1000])
        broker.advance(milliseconds: 201)
        #expect(broker.replies(to: "cli").isEmpty)
        broker.advance(milliseconds: 798)
        #expect(broker.replies(to: "cli").isEmpty)
        broker.advance(milliseconds: 1)
        let reply = try #require(broker.replies(to: "cli").first)
        #expect(
            try reply.json()["missing"] == [
                ["service": "dies", "reason": "service expired before acknowledging"],
                ["service": "silent", "reason": "no acknowledgement within 1000 ms"],
            ])
    }

    @Test("an acknowledged publish with no subscriber answers at once; --ack works for any event")
    func noSubscribers() throws {
        var broker = BrokerHarness()
        let step2 = broker.request("cli", .publish, ["event": "shop.paid", "ack": true])
        let reply = try #require(step2)
        #expect(try reply.json()["subscribers"] == 0)
        #expect(try reply.json()["acknowledged"] == [])
    }

    @Test("an acknowledged publish reports the lifecycle state the event left, even when it moved since")
    func lifecycleReported() throws {
        var broker = BrokerHarness()
        broker.register("a", peer: "pa", events: [.willResignActive])
        let step1 = broker.request("cli", .publish, ["event": "shop.paid", "ack": true])
        #expect(try #require(step1).json()["lifecycle"] == "notRunning", "answered at once, no subscriber")
        broker.request("cli", .publish, ["event": "willResignActive", "force": true])
        let event = try #require(broker.published.first)
        #expect(broker.core.lifecycle == .inactive)
        let step2 = broker.request("cli", .publish, ["event": "didEnterBackground", "ack": false])
        #expect(try #require(step2).json()["lifecycle"] == "background")
        broker.request("pa", .ack, ["sequence": .int(Int64(event.header.sequence)), "name": "a"])
        let reply = try #require(broker.replies(to: "cli").first)
        #expect(try reply.json()["acknowledged"] == ["a"])
        #expect(try reply.json()["lifecycle"] == "inactive")
    }
}
