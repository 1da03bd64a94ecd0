import LifelineProtocol
import Testing

@testable import LifelineBroker

@Suite("Broker calls, publishing and bad input", .timeLimit(.minutes(1)))
struct CallAndPublishTests {
    @Test(
        "each refused request gets one log line beside its reply (unknown event, broker-only event, lifecycle conflict); a 404 is an answer, not logged"
    )
    func refusalsAreLogged() throws {
        var broker = BrokerHarness()
        func logs() -> [String] {
            broker.output.compactMap { if case .log(let line) = $0 { line } else { nil } }
        }
        broker.request("cli", .publish, ["event": "frob"])
        #expect(broker.replies(to: "cli").first?.status == .badRequest)
        #expect(logs().count == 1 && logs()[0].hasPrefix("refused a request from "), "\(logs())")
        broker.request("cli", .publish, ["event": "serviceDidStart"])
        #expect(broker.replies(to: "cli").first?.status == .forbidden)
        #expect(logs().count == 1, "\(logs())")
        broker.request("cli", .publish, ["event": "willResignActive"])
        #expect(broker.replies(to: "cli").first?.status == .conflict)
        #expect(logs().count == 1 && logs()[0].contains("409 willResignActive makes no sense"), "\(logs())")
        broker.request("cli", .lookup, ["name": "nobody"])
        #expect(broker.replies(to: "cli").first?.status == .notFound)
        #expect(logs().isEmpty)
        broker.request("cli", .attach, ["token": .string(String(repeating: "t", count: 129))])
        #expect(
            broker.replies(to: "cli").first?.errorMessage
                == "ATTACH 'token' must be at most 128 bytes (its bus marker's limit), not 129")
        broker.request("cli", .boot, ["op": "start", "launchOptions": 5])
        #expect(broker.replies(to: "cli").first?.errorMessage == "BOOT 'launchOptions' must be a JSON object")
    }

    @Test("a call goes to the service and its reply comes back to the caller unchanged")
    func callRoundTrip() throws {
        var broker = BrokerHarness()
        broker.register("push", peer: "svc")
        broker.request("cli", .call, ["service": "push", "method": "status"], payload: Array("[1]".utf8))
        let forwarded = try #require(broker.requests(to: "svc").first)
        #expect(forwarded.command == .call)
        #expect(forwarded.header["method"] == "status")
        #expect(forwarded.payload == Array("[1]".utf8))
        let serviceError = ControlReply(
            requestID: forwarded.requestID, status: Status(rawValue: 418),
            json: ["error": "teapot", "hint": 1])
        broker.raw("svc", serviceError.frames())
        let reply = try #require(broker.replies(to: "cli").first)
        #expect(reply.status.rawValue == 418)
        #expect(reply.body == serviceError.body)
        #expect(reply.requestID == Array("r2".utf8))
    }

    @Test(
        "a group's new leader answers a lookup or call of a service not registered yet with 503 while services register again, then 404"
    )
    func missingServiceAfterTakeover() throws {
        var broker = BrokerHarness()
        broker.core.beginGroupTerm(rejoinWindow: .seconds(5), now: broker.instant)
        broker.advance(milliseconds: 1200)
        let earlyReply = broker.request("cli", .call, ["service": "push", "method": "status"])
        let early = try #require(earlyReply)
        #expect(early.status == .unavailable)
        #expect(
            early.errorMessage
                == "no service named 'push' has registered yet: this broker took over its group 1200 ms ago and services are registering again; retry"
        )
        #expect(broker.request("cli", .lookup, ["name": "push"])?.status == .unavailable)
        broker.register("push", peer: "svc")
        broker.request("cli", .call, ["service": "push", "method": "status"])
        #expect(
            broker.requests(to: "svc").first?.header["method"] == "status", "a registered service is called")
        broker.advance(milliseconds: 3800)
        let lateReply = broker.request("cli", .lookup, ["name": "pull"])
        let late = try #require(lateReply)
        #expect(late.status == .notFound)
        #expect(late.errorMessage.hasPrefix("no service named 'pull'"))
    }

    @Test("unknown services and methods are not found; unanswered calls time out on time")
    func callFailures() throws {
        var broker = BrokerHarness()
        broker.register("push", peer: "svc")
        let step1 = broker.request("cli", .call, ["service": "nope", "method": "x"])
        #expect(step1?.errorMessage == "no service named 'nope'")
        let noMethodReply = broker.request("cli", .call, ["service": "push", "method": "x"])
        let noMethod = try #require(noMethodReply)
        #expect(noMethod.status == .notFound)
        #expect(noMethod.errorMessage == "service 'push' has no method 'x'; it answers: status")
        broker.request("cli", .call, ["service": "push", "method": "status", "timeoutMs": 300])
        let forwardedID = try #require(broker.requests(to: "svc").first).requestID
        broker.advance(milliseconds: 299)
        #expect(broker.replies(to: "cli").isEmpty)
        broker.advance(milliseconds: 1)
        let timeout = try #require(broker.replies(to: "cli").first)
        #expect(timeout.status == .timeout)
        #expect(timeout.errorMessage == "push.status did not answer within 300 ms")
        broker.raw("svc", ControlReply(requestID: forwardedID, json: "late").frames())
        #expect(broker.replies(to: "cli").isEmpty, "a late reply is dropped")
        let step2 = broker.request("cli", .call, ["service": "push", "method": "status", "timeoutMs": 0])
        #expect(step2?.status == .badRequest)
    }

    @Test("a service that expires mid-call fails the call at once")
    func serviceGoneDuringCall() throws {
        var broker = BrokerHarness()
        broker.register(
            "push", peer: "svc", heartbeat: HeartbeatSettings(intervalMilliseconds: 100, liveness: 2))
        broker.request("cli", .call, ["service": "push", "method": "status", "timeoutMs": 10000])
        broker.advance(milliseconds: 201)
        let reply = try #require(broker.replies(to: "cli").first)
        #expect(reply.status == .unavailable)
    }

    @Test("a publication repeated with its id is answered with the first receipt and published once")
    func repeatedPublication() throws {
        var broker = BrokerHarness { $0.rememberedPublications = 2 }
        let first = broker.request("a", .publish, ["event": "com.example.x", "publishId": "a.1"])
        #expect(broker.published.count == 1)
        let again = broker.request("b", .publish, ["event": "com.example.x", "publishId": "a.1"])
        #expect(broker.published.isEmpty, "not published twice")
        #expect(again?.status == .ok && again?.body == first?.body)
        broker.request("a", .publish, ["event": "com.example.x", "publishId": "a.2"])
        broker.request("a", .publish, ["event": "com.example.x", "publishId": "a.3"])
        broker.request("a", .publish, ["event": "com.example.x", "publishId": "a.1"])
        #expect(broker.published.count == 1, "beyond the memory the oldest id is forgotten")
        let bad = broker.request("a", .publish, ["event": "com.example.x", "publishId": ""])
        #expect(
            bad?.status == .badRequest && bad?.errorMessage == "PUBLISH 'publishId' must be 1...128 bytes")
    }

    @Test("under CURVE each key's publication ids are its own: another key's same id is another publication")
    func publicationIDsPerKey() throws {
        var broker = BrokerHarness()
        let first = broker.request("a", .publish, ["event": "com.example.x", "publishId": "p.1"], key: "KA")
        let other = broker.request("b", .publish, ["event": "com.example.y", "publishId": "p.1"], key: "KB")
        #expect(broker.published.map(\.name) == ["com.example.y"], "published: not key KA's receipt")
        #expect(other?.body != first?.body)
        let again = broker.request("c", .publish, ["event": "com.example.x", "publishId": "p.1"], key: "KA")
        #expect(broker.published.isEmpty, "the same key's repeat, from another connection, is not published")
        #expect(again?.body == first?.body)
    }

    @Test("a repeat of an acknowledged publication still waiting is answered with it, once acknowledged")
    func repeatedAcknowledgedPublication() throws {
        var broker = BrokerHarness()
        broker.register("push", peer: "svc", events: ["com.example.x"])
        broker.request("cli", .publish, ["event": "com.example.x", "ack": true, "publishId": "c.1"])
        let event = try #require(broker.published.first)
        broker.request("cli", .publish, ["event": "com.example.x", "ack": true, "publishId": "c.1"])
        #expect(broker.published.isEmpty && broker.replies(to: "cli").isEmpty)
        broker.request(
            "svc", .ack,
            [
                "sequence": .int(Int64(event.header.sequence)), "epoch": .int(Int64(event.header.epoch)),
                "name": "push",
            ])
        let replies = broker.replies(to: "cli")
        #expect(replies.map(\.requestID) == [Array("r2".utf8), Array("r3".utf8)])
        #expect(Set(replies.map(\.body)).count == 1)
        #expect(try replies.first?.json()["acknowledged"] == ["push"])
    }

    @Test("publish stamps strictly increasing sequences and counts subscribed services")
    func publish() throws {
        var broker = BrokerHarness()
        broker.register("a", peer: "p1", events: [.didBecomeActive])
        broker.register("b", peer: "p2", events: [.didBecomeActive, .willTerminate])
        let firstReply = broker.request(
            "cli", .publish, ["event": "didBecomeActive", "force": true], payload: Array("{}".utf8))
        let first = try #require(firstReply)
        #expect(try first.json()["subscribers"] == 2)
        let event = try #require(broker.published.first)
        #expect(event.name == .didBecomeActive)
        #expect(event.header.topicSequence == 1)
        let secondReply = broker.request("cli", .publish, ["event": "willTerminate", "ack": false])
        let second = try #require(secondReply)
        #expect(try second.json()["subscribers"] == 1)
        #expect(try second.json()["sequence"]!.intValue! > first.json()["sequence"]!.intValue!)
        let step3 = broker.request("cli", .publish, ["event": "shop.cartDidChange"])
        #expect(try step3?.json()["subscribers"] == 0)
    }

    @Test(
        "publish refuses unknown events, runtime events and bad payloads with clear errors",
        arguments: [
            ("didEnterBackgroun", "{}", 400, "unknown event 'didEnterBackgroun'"),
            ("serviceDidStart", "{\"name\":\"x\"}", 403, "serviceDidStart is published by the broker only"),
            ("openURL", "{}", 422, "openURL needs the field 'url'"),
            ("openURL", "{url", 400, "the payload of openURL is not JSON: invalid JSON at byte 1"),
        ])
    func publishRefusals(event: String, payload: String, status: Int, message: String) throws {
        var broker = BrokerHarness()
        let replyReply = broker.request(
            "cli", .publish, ["event": .string(event)], payload: Array(payload.utf8))
        let reply = try #require(replyReply)
        #expect(reply.status.rawValue == status)
        #expect(reply.errorMessage.hasPrefix(message), "\(reply.errorMessage)")
        #expect(broker.published.isEmpty)
    }

    @Test(
        "every event the catalog reserves for the broker, and each launch phase, is refused with 403",
        arguments: EventCatalog.all.filter { $0.origin == .runtime }.map(\.name) + EventCatalog.launchPhases)
    func brokerOnlyEventsRefused(event: EventName) throws {
        var broker = BrokerHarness()
        let step = broker.request("cli", .publish, ["event": .string(event.rawValue)])
        let reply = try #require(step)
        #expect(reply.status == .forbidden, "\(event): \(reply.errorMessage)")
        let expected =
            EventCatalog.launchPhases.contains(event)
            ? "\(event) is a phase of didFinishLaunching; dispatch didFinishLaunching instead"
            : "\(event) is published by the broker only"
        #expect(reply.errorMessage == expected)
        #expect(broker.published.isEmpty)
    }

    @Test("garbage gets an error reply and a log line, and the broker answers correctly right after")
    func garbage() throws {
        var broker = BrokerHarness()
        broker.register("push", peer: "svc")
        let garbage: [[[UInt8]]] = [
            [[0xDE, 0xAD]], [], [Array("LLC09".utf8), Array("HELLO".utf8), [1], []],
            [Array("LLC01".utf8), Array("NOPE".utf8), [1], []],
            [Array("LLC01".utf8), Array("LOOKUP".utf8)],
            (0..<40).map { _ in [UInt8](repeating: 7, count: 3) },
        ]
        for frames in garbage {
            let replyReply = broker.raw("bad", frames)
            let reply = try #require(replyReply)
            #expect(!reply.status.isSuccess)
            #expect(broker.output.contains { if case .log = $0 { true } else { false } })
        }
        let step4 = broker.request("cli", .lookup, ["name": "push"])
        #expect(step4?.status == .ok)
    }

    @Test("an oversized message is refused with 413 before it is decoded")
    func oversized() throws {
        var broker = BrokerHarness { $0.maximumMessageBytes = 1000 }
        let replyReply = broker.request(
            "cli", .publish, ["event": "shop.x"], payload: [UInt8](repeating: 32, count: 2000))
        let reply = try #require(replyReply)
        #expect(reply.status == .payloadTooLarge)
        #expect(broker.published.isEmpty)
    }

    @Test("shutdown tells every registered service that the broker is leaving")
    func shutdown() {
        var broker = BrokerHarness()
        broker.register("a", peer: "p1")
        broker.register("b", peer: "p2")
        broker.output.removeAll()
        broker.core.shutdown(reason: "broker shutting down", into: &broker.output)
        #expect(broker.requests(to: "p1").map(\.command) == [.disconnect])
        #expect(broker.requests(to: "p2").map(\.command) == [.disconnect])
    }
}
