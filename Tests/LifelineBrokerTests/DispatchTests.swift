import LifelineProtocol
import Testing

@testable import LifelineBroker

@Suite("Ordered dispatch and completions", .timeLimit(.minutes(1)))
struct DispatchTests {
    @Test(
        "services are offered the event by priority, then registration order; the first non-continue decides")
    func orderAndDecision() throws {
        var broker = BrokerHarness()
        broker.register("first-registered", peer: "p1", events: [.openURL])
        broker.register("high", peer: "p2", events: [.openURL], priorities: [.openURL: 10])
        broker.register("third", peer: "p3", events: [.openURL])
        broker.register("never", peer: "p4", events: [.openURL], priorities: [.openURL: -5])
        broker.request("cli", .dispatch, ["event": "openURL"], payload: Array(#"{"url":"app://a"}"#.utf8))
        let offer1 = try #require(broker.offers(to: "p2").first)
        #expect(offer1.header["event"] == "openURL")
        broker.answer(offer1, from: "p2", payload: ["url": "app://rewritten"])
        let offer2 = try #require(broker.offers(to: "p1").first)
        #expect(
            try JSONParser.parse(offer2.payload ?? []) == ["url": "app://rewritten"],
            "the next service sees the rewritten URL")
        broker.answer(offer2, from: "p1")
        let offer3 = try #require(broker.offers(to: "p3").first)
        broker.answer(offer3, from: "p3", "returnYES")
        #expect(broker.offers(to: "p4").isEmpty)
        let reply = try #require(broker.replies(to: "cli").first).json()
        #expect(reply["result"] == "returnYES")
        #expect(reply["returnValue"] == true)
        #expect(reply["decidedBy"] == "third")
        #expect(reply["payload"] == ["url": "app://rewritten"])
        #expect(reply["trace"]?.arrayValue?.map { $0["service"] } == ["high", "first-registered", "third"])
        #expect(reply["trace"]?.arrayValue?.map { $0["answer"] } == ["continue", "continue", "returnYES"])
        #expect(broker.published.map(\.name) == [.dispatchDidComplete])
    }

    @Test("when nobody decides, the event's default applies (openURL: not handled)")
    func defaults() throws {
        var broker = BrokerHarness()
        let step1 = broker.request(
            "cli", .dispatch, ["event": "openURL"], payload: Array(#"{"url":"x:"}"#.utf8))
        let reply = try #require(step1).json()
        #expect(reply["result"] == "continue")
        #expect(reply["returnValue"] == false)
        #expect(reply["decidedBy"] == .null)
        #expect(reply["trace"] == [])
    }

    @Test("a service whose connection closed before its step is skipped at once, not offered the event")
    func closedBeforeTheStep() throws {
        var broker = BrokerHarness()
        // Peers whose last 4 bytes are their connection's number, as the socket shell makes them.
        broker.register("dead", peer: "p1\u{0}\u{0}\u{0}\u{1}", events: [.openURL], priorities: [.openURL: 5])
        broker.register("alive", peer: "p2\u{0}\u{0}\u{0}\u{2}", events: [.openURL])
        broker.core.connectionsClosed([1], now: broker.instant, into: &broker.output)
        broker.request("cli", .dispatch, ["event": "openURL"], payload: Array(#"{"url":"x:"}"#.utf8))
        #expect(broker.offers(to: "p1\u{0}\u{0}\u{0}\u{1}").isEmpty)
        let offer = try #require(
            broker.offers(to: "p2\u{0}\u{0}\u{0}\u{2}").first, "the next is asked at once")
        broker.answer(offer, from: "p2\u{0}\u{0}\u{0}\u{2}", "returnYES")
        let reply = try #require(broker.replies(to: "cli").first).json()
        let trace = reply["trace"]?.arrayValue ?? []
        #expect(trace.first?["service"] == "dead" && trace.first?["status"] == "gone")
        #expect(trace.first?["error"] == "its connection has closed")
        #expect(reply["decidedBy"] == "alive")
    }

    @Test("a service that misses its deadline or dies mid-step is skipped on time and marked in the trace")
    func deadlinesAndDeath() throws {
        var broker = BrokerHarness()
        broker.register(
            "slow", peer: "p1", events: [.continueUserActivity], priorities: [.continueUserActivity: 3],
            deadlines: [.continueUserActivity: 300])
        broker.register(
            "mortal", peer: "p2", events: [.continueUserActivity],
            heartbeat: HeartbeatSettings(intervalMilliseconds: 100, liveness: 2),
            priorities: [.continueUserActivity: 2])
        broker.register("last", peer: "p3", events: [.continueUserActivity])
        broker.request(
            "cli", .dispatch, ["event": "continueUserActivity"], payload: Array(#"{"activityType":"t"}"#.utf8)
        )
        #expect(broker.offers(to: "p1").count == 1)
        broker.advance(milliseconds: 100)
        broker.request("p2", .heartbeat)
        broker.advance(milliseconds: 199)
        #expect(broker.offers(to: "p2").isEmpty)
        broker.advance(milliseconds: 1)
        #expect(broker.offers(to: "p2").count == 1, "the slow service was skipped at its 300 ms deadline")
        broker.advance(milliseconds: 201)
        let lastOffer = try #require(
            broker.offers(to: "p3").first, "the dead service was skipped when it expired")
        broker.answer(lastOffer, from: "p3")
        let reply = try #require(broker.replies(to: "cli").first).json()
        #expect(reply["trace"]?.arrayValue?.map { $0["status"] } == ["timeout", "gone", "answered"])
        #expect(reply["returnValue"] == false)
    }

    @Test("didFinishLaunching runs before, handle and after; returnNO in handle ends the launch early")
    func launchPhases() throws {
        var broker = BrokerHarness()
        broker.register("before", peer: "pb", events: [.beforeDidFinishLaunching])
        broker.register("handler", peer: "ph", events: [.didFinishLaunching])
        broker.register("after", peer: "pa", events: [.afterDidFinishLaunching])
        broker.request("cli", .dispatch, ["event": "didFinishLaunching"])
        broker.answer(try #require(broker.offers(to: "pb").first), from: "pb", "return")
        broker.answer(try #require(broker.offers(to: "ph").first), from: "ph")
        broker.answer(try #require(broker.offers(to: "pa").first), from: "pa")
        let full = try #require(broker.replies(to: "cli").first).json()
        #expect(
            full["trace"]?.arrayValue?.map { $0["event"] } == [
                "beforeDidFinishLaunching", "didFinishLaunching", "afterDidFinishLaunching",
            ])
        #expect(full["launchEndedEarly"] == false)
        #expect(full["returnValue"] == true)
        #expect(broker.core.lifecycle == .launching)

        broker.request("cli", .dispatch, ["event": "didFinishLaunching", "force": true])
        broker.answer(try #require(broker.offers(to: "pb").first), from: "pb")
        broker.answer(try #require(broker.offers(to: "ph").first), from: "ph", "returnNO")
        #expect(broker.offers(to: "pa").isEmpty)
        let early = try #require(broker.replies(to: "cli").first).json()
        #expect(early["launchEndedEarly"] == true)
        #expect(early["returnValue"] == false)
    }

    @Test(
        "completion events go to all handlers at once and complete exactly once by their rule",
        arguments: [
            (["newData", "failed", "noData"], "newData"), (["noData", "failed"], "failed"),
            (["noData", "noData"], "noData"),
        ])
    func fetchRule(answers: [String], expected: String) throws {
        var broker = BrokerHarness()
        for (index, _) in answers.enumerated() {
            broker.register("s\(index)", peer: "p\(index)", events: [.performFetch])
        }
        broker.request("cli", .dispatch, ["event": "performFetch"])
        let offers = answers.indices.map { broker.offers(to: "p\($0)").first }
        #expect(
            offers.allSatisfy { $0?.header["timeoutMs"] == 30_000 },
            "performFetch's deadline is 30 s, as on iOS")
        for (index, answer) in answers.enumerated() {
            #expect(broker.replies(to: "cli").isEmpty)
            broker.answer(try #require(offers[index]), from: "p\(index)", completion: .string(answer))
        }
        let replies = broker.replies(to: "cli")
        #expect(replies.count == 1)
        #expect(try replies[0].json()["completion"] == .string(expected))
    }

    @Test("completions: nobody handles it, a handler times out, and the other rules")
    func otherCompletions() throws {
        var broker = BrokerHarness()
        let step2 = broker.request("cli", .dispatch, ["event": "performFetch"])
        #expect(try step2?.json()["completion"] == "noData")
        let step3 = broker.request("cli", .dispatch, ["event": "handleWatchKitExtensionRequest"])
        #expect(try step3?.json()["completion"] == [:])
        let step4 = broker.request(
            "cli", .dispatch, ["event": "performActionForShortcutItem"], payload: Array(#"{"type":"t"}"#.utf8)
        )
        #expect(try step4?.json()["completion"] == false)

        broker.register("late", peer: "pl", events: [.performFetch])
        broker.register("fine", peer: "pf", events: [.performFetch])
        broker.request("cli", .dispatch, ["event": "performFetch", "timeoutMs": 500])
        broker.answer(try #require(broker.offers(to: "pf").first), from: "pf", completion: "noData")
        broker.advance(milliseconds: 500)
        let reply = try #require(broker.replies(to: "cli").first).json()
        #expect(reply["completion"] == "failed", "a missed deadline counts as failed")

        broker.register("w1", peer: "w1", events: [.handleWatchKitExtensionRequest])
        broker.register("w2", peer: "w2", events: [.handleWatchKitExtensionRequest])
        broker.request("cli", .dispatch, ["event": "handleWatchKitExtensionRequest"])
        let (watch1, watch2) = (
            try #require(broker.offers(to: "w1").first), try #require(broker.offers(to: "w2").first)
        )
        broker.answer(watch2, from: "w2", completion: ["b": 2, "a": 9])
        broker.answer(watch1, from: "w1", completion: ["a": 1])
        #expect(
            try broker.replies(to: "cli").first?.json()["completion"] == ["a": 9, "b": 2],
            "merged in dispatch order")
    }

    @Test("a bad answer is recorded as an error and the chain goes on")
    func badAnswer() throws {
        var broker = BrokerHarness()
        broker.register("confused", peer: "p1", events: ["app.go"], priorities: ["app.go": 1])
        broker.register("ok", peer: "p2", events: ["app.go"])
        broker.request("cli", .dispatch, ["event": "app.go"])
        broker.answer(try #require(broker.offers(to: "p1").first), from: "p1", "maybe")
        broker.answer(try #require(broker.offers(to: "p2").first), from: "p2", "return")
        let reply = try #require(broker.replies(to: "cli").first).json()
        #expect(
            reply["trace"]?.arrayValue?.first?["error"]
                == "answered 'maybe'; expected continue, return, returnYES or returnNO")
        #expect(reply["decidedBy"] == "ok")
    }
}
