import LifelineProtocol
import Testing

@testable import LifelineBroker

@Suite(
    "The broker's limits: what a peer can make it hold is bounded, and refused clearly",
    .timeLimit(.minutes(1)))
struct LimitsTests {
    @Test("one connection registers at most --max-names-per-connection names; more get 429")
    func namesPerConnection() throws {
        var broker = BrokerHarness { $0.maximumNamesPerConnection = 2 }
        #expect(broker.register("a", peer: "p", instance: "i")?.status == .ok)
        #expect(broker.register("b", peer: "p", instance: "i")?.status == .ok)
        let third = broker.register("c", peer: "p", instance: "i")
        #expect(third?.status == .tooMany)
        #expect(
            third?.errorMessage
                == "this connection already registered 2 names, the broker's limit (--max-names-per-connection)"
        )
        #expect(
            broker.register("a", peer: "p", instance: "i")?.status == .ok,
            "registering a name again is not one more")
        #expect(broker.register("c", peer: "q", instance: "j")?.status == .ok, "the limit is per connection")
    }

    @Test("a heartbeat window longer than --max-heartbeat-window is refused with 400")
    func heartbeatWindow() {
        var broker = BrokerHarness()
        let reply = broker.register(
            "slow", peer: "p", heartbeat: HeartbeatSettings(intervalMilliseconds: 600_000, liveness: 100))
        #expect(reply?.status == .badRequest)
        #expect(
            reply?.errorMessage
                == "REGISTER heartbeat window of 60000000 ms (intervalMs × liveness) exceeds the broker's limit of 60000 ms"
        )
        #expect(broker.core.serviceCount == 0)
    }

    @Test("the broker keeps positions for at most --max-event-names names; a new one beyond gets 429")
    func eventNames() {
        var broker = BrokerHarness { $0.maximumEventNames = 3 }
        for name in ["app.a", "app.b", "app.c"] {
            #expect(broker.request("cli", .publish, ["event": .string(name)])?.status == .ok)
        }
        let fourth = broker.request("cli", .publish, ["event": "app.d"])
        #expect(fourth?.status == .tooMany && broker.published.isEmpty)
        #expect(
            fourth?.errorMessage
                == "the broker already keeps 3 event names, its limit (--max-event-names): app.d would be one more"
        )
        #expect(broker.request("cli", .publish, ["event": "app.a"])?.status == .ok, "known names go on")
        broker.request("cli", .publish, ["event": "app.e", "reply": false])
        #expect(
            broker.published.isEmpty && broker.output.contains { if case .log = $0 { true } else { false } })
    }

    @Test("the journal holds at most --journal-bytes of events, dropping the oldest")
    func journalBytes() {
        var journal = EventJournal(capacity: 1000, maximumAgeMilliseconds: 600_000, maximumBytes: 10_000)
        for sequence in 1...100 {
            let message = BusMessage(
                name: "app.big",
                header: BusHeader(
                    epoch: 1, sequence: UInt64(sequence), topicSequence: UInt64(sequence),
                    publishedWallNanoseconds: 0,
                    publishedMonotonicNanoseconds: 0), payload: [UInt8](repeating: 65, count: 1000))
            journal.append(message, now: 1)
        }
        #expect(journal.bytes <= 10_000)
        #expect(journal.count == 9 && journal.firstRetainedSequence == 92)
        #expect(!journal.covers(after: 50) && journal.covers(after: 91))
    }

    @Test("past its capacity the marker table forgets the oldest markers first")
    func markers() {
        var markers = AttachTracker()
        for index in 0..<(AttachTracker.capacity + 10) { _ = markers.markerSubscribed("t\(index)", now: 0) }
        #expect(!markers.hasSeen("t0") && !markers.hasSeen("t9"))
        #expect(markers.hasSeen("t10") && markers.hasSeen("t\(AttachTracker.capacity + 9)"))
    }

    @Test(
        "under CURVE a marker counts only for its own key: another key subscribing a service's marker does not answer its REGISTER"
    )
    func markersByKey() throws {
        var markers = AttachTracker()
        markers.wait(for: "svc", key: 1, owner: "KS")
        #expect(markers.markerSubscribed("svc", owner: "KR", now: 0).isEmpty, "a squatter releases nothing")
        #expect(
            !markers.hasSeen("svc", by: "KS") && markers.hasSeen("svc", by: "KR") && markers.hasSeen("svc"))
        #expect(markers.markerSubscribed("svc", refused: ["nope"], owner: "KS", now: 0) == [1])
        #expect(markers.hasSeen("svc", by: "KS"))
        markers.markerUnsubscribed("svc", owner: "KR")
        #expect(markers.hasSeen("svc", by: "KS"), "another key's unsubscription does not take it away")
        #expect(
            markers.refusals(of: "svc", by: "KS") == ["nope"] && markers.refusals(of: "svc", by: "KR").isEmpty
        )
        markers.markerUnsubscribed("svc", owner: "KS")
        #expect(!markers.hasSeen("svc", by: "KS") && !markers.hasSeen("svc"))

        var broker = BrokerHarness()
        let registration = BrokerHarness.registration("url", instance: "url-1", events: [.openURL])
        broker.subscribeMarker("url-1", subscriber: "KR")
        let early = broker.request("url", .register, registration, key: "KS")
        #expect(early == nil, "not answered: its own marker has not arrived")
        broker.subscribeMarker("url-1", subscriber: "KS")
        #expect(
            broker.replies(to: "url").first?.status == .ok, "answered once its own connection's marker came")
    }

    @Test("a service's heartbeat says how many events its handlers' queue dropped; its record shows it")
    func dropsReported() throws {
        var broker = BrokerHarness()
        broker.register("slow", peer: "p")
        broker.request("p", .heartbeat, ["dropped": 42])
        let answer = broker.request("cli", .lookup, ["name": "slow"])
        let record = try #require(answer)
        #expect(try record.json()["dropped"] == 42)
    }
}
