import LifelineProtocol
import Testing

@testable import LifelineBroker

@Suite(
    "Shared events: each to one instance, acknowledged, given to another when it dies",
    .timeLimit(.minutes(1)))
struct SharedDeliveryTests {
    static func instance(_ id: String, shared: [EventName] = ["app.paid"]) -> JSONValue {
        InstanceTests.instance(
            "pay", id, methods: ["charge"], idempotent: [], events: ["app.paid", "app.seen"], shared: shared)
    }

    /// The shared EVENTs sent to `peer` in the last step, by sequence.
    static func shared(to peer: String, _ broker: BrokerHarness) -> [UInt64] {
        broker.requests(to: peer).filter { $0.command == .event }.compactMap { request in
            guard let flags = request.header["flags"]?.intValue, flags & 3 == 3 else { return nil }
            return request.header["sequence"]?.intValue.map { UInt64($0) }
        }
    }

    static func ack(_ broker: inout BrokerHarness, _ peer: String, _ sequence: UInt64) {
        broker.request(peer, .ack, ["sequence": .int(Int64(sequence)), "name": "pay"])
    }

    @Test(
        "each shared event goes to one instance, fewest in flight first; the others to every instance on the bus"
    )
    func oneEach() throws {
        var broker = BrokerHarness()
        InstanceTests.join(&broker, "p1", Self.instance("i1"))
        InstanceTests.join(&broker, "p2", Self.instance("i2"))
        var received: [String: [UInt64]] = [:]
        for _ in 0..<4 {
            broker.request("pub", .publish, ["event": "app.paid"])
            for peer in ["p1", "p2"] { received[peer, default: []] += Self.shared(to: peer, broker) }
            #expect(broker.published.first?.name == "app.paid", "it is on the bus too, for other subscribers")
        }
        #expect(received["p1"]?.count == 2 && received["p2"]?.count == 2)
        #expect(Set(received.values.flatMap { $0 }).count == 4, "each event to one instance")
        broker.request("pub", .publish, ["event": "app.seen"])
        #expect(Self.shared(to: "p1", broker).isEmpty && Self.shared(to: "p2", broker).isEmpty)
        let statsReply = broker.request("cli", .stats)
        let figures = try #require(statsReply).json()["services"]?["pay"]?["shared"]
        #expect(figures?["inFlight"] == 4 && figures?["sent"] == 4)
        for (peer, sequences) in received { for sequence in sequences { Self.ack(&broker, peer, sequence) } }
        let afterReply = broker.request("cli", .stats)
        #expect(try #require(afterReply).json()["services"]?["pay"]?["shared"]?["inFlight"] == 0)
    }

    @Test(
        "a batch of shared events (one run of one name): each event to one instance, all of them on the bus")
    func sharedBatch() throws {
        var broker = BrokerHarness()
        InstanceTests.join(&broker, "p1", Self.instance("i1"))
        InstanceTests.join(&broker, "p2", Self.instance("i2"))
        let frames = ControlRequest(
            .publish, requestID: Array("b1".utf8), header: ["event": "app.paid", "count": 4],
            payload: PackedPayloads.frame(Array(repeating: Array("{}".utf8), count: 4))
        ).frames()
        let reply = broker.raw("pub", frames)
        #expect(reply?.status == .ok)
        let published = broker.published.filter { $0.name == "app.paid" }
        #expect(published.count == 4)
        let (first, second) = (Self.shared(to: "p1", broker), Self.shared(to: "p2", broker))
        #expect(first.count == 2 && second.count == 2, "\(first) \(second)")
        #expect(Set(first + second) == Set(published.map(\.header.sequence)), "each event to one instance")
        let positions = broker.core.core.topicPositions(for: ["app.paid"]).positions
        #expect(positions["app.paid"]?.sequence == published.last?.header.sequence)
    }

    @Test(
        "an instance that dies gives its unacknowledged events to another; with none left they wait for the next"
    )
    func redelivery() throws {
        var broker = BrokerHarness()
        let (first, second) = ("p1\u{0}\u{0}\u{0}\u{1}", "p2\u{0}\u{0}\u{0}\u{2}")
        InstanceTests.join(&broker, first, Self.instance("i1"))
        InstanceTests.join(&broker, second, Self.instance("i2"))
        broker.request("pub", .publish, ["event": "app.paid"])
        let toFirst = Self.shared(to: first, broker) + Self.shared(to: second, broker)
        let sequence = try #require(toFirst.first)
        let holder = Self.shared(to: first, broker).isEmpty ? second : first
        let other = holder == first ? second : first
        broker.output.removeAll()
        broker.core.connectionsClosed([holder == first ? 1 : 2], now: broker.instant, into: &broker.output)
        #expect(Self.shared(to: other, broker) == [sequence], "sent again to the other instance")
        Self.ack(&broker, other, sequence)
        // The other dies too: what is published now waits for the name's next instance.
        broker.output.removeAll()
        broker.core.connectionsClosed([holder == first ? 2 : 1], now: broker.instant, into: &broker.output)
        broker.request("pub", .publish, ["event": "app.paid"])
        broker.request("pub", .publish, ["event": "app.paid"])
        broker.advance(milliseconds: 4000)  // both expire: the name is gone
        #expect(broker.request("cli", .lookup, ["name": "pay"])?.status == .notFound)
        InstanceTests.join(&broker, "p3", Self.instance("i3"))
        #expect(Self.shared(to: "p3", broker).count == 2, "held for the name, delivered when one joins")
    }

    @Test("an acknowledged publish of a shared event waits for the one instance that got it")
    func acknowledgedPublish() throws {
        var broker = BrokerHarness()
        InstanceTests.join(&broker, "p1", Self.instance("i1"))
        InstanceTests.join(&broker, "p2", Self.instance("i2"))
        broker.request("pub", .publish, ["event": "app.paid", "ack": true])
        let peer = Self.shared(to: "p1", broker).isEmpty ? "p2" : "p1"
        let sequence = try #require(Self.shared(to: peer, broker).first)
        Self.ack(&broker, peer, sequence)
        let receipt = try #require(broker.replies(to: "pub").first)
        #expect(try receipt.json()["acknowledged"] == ["pay"])
    }

    @Test("instances must agree on what is shared; 'shared' must name listed events")
    func declarations() throws {
        var broker = BrokerHarness()
        InstanceTests.join(&broker, "p1", Self.instance("i1"))
        let otherReply = InstanceTests.join(&broker, "p2", Self.instance("i2", shared: []))
        let other = try #require(otherReply)
        #expect(other.status == .conflict && other.errorMessage.contains("its shared events differ"))
        let badReply = broker.request(
            "p9", .register,
            InstanceTests.instance(
                "x", "x1", methods: [], idempotent: [], events: ["app.a"], shared: ["app.b"]))
        let bad = try #require(badReply)
        #expect(
            bad.status == .badRequest
                && bad.errorMessage == "REGISTER 'shared' must name events listed in 'events'")
    }

    @Test(
        "a restarted broker owes each name the shared events it had not acknowledged, held before an instance joins"
    )
    func durablePosition() throws {
        var outputs: [[BrokerOutput]] = []
        var first = BrokerHarness { $0.stateDirectory = "/state" }
        outputs.append(first.core.takeStartupOutput())
        InstanceTests.join(&first, "p1", Self.instance("i1"))
        outputs.append(first.output)
        var sent: [UInt64] = []
        for event: EventName in ["app.paid", "app.paid", "app.seen", "app.paid", "app.paid"] {
            first.request("pub", .publish, ["event": .string(event.rawValue)])
            outputs.append(first.output)
            sent += Self.shared(to: "p1", first)
        }
        let declaredAt = try #require(sent.first) - 1
        #expect(sent.count == 4)
        guard sent.count == 4 else { return }
        for sequence in [sent[0], sent[2]] {
            Self.ack(&first, "p1", sequence)
            outputs.append(first.output)
        }

        var second = BrokerHarness.restarted(journal: DurableJournalTests.file(of: outputs))
        #expect(
            second.core.startupNotes.last
                == "restored the shared-event position of 1 service name(s): 2 event(s) wait for their instances"
        )
        outputs = [second.core.takeStartupOutput()]
        let late = try #require(
            second.request("pub", .publish, ["event": "app.paid"])?.json()["sequence"]?.intValue)
        outputs.append(second.output)
        InstanceTests.join(&second, "p2", Self.instance("i2"))
        outputs.append(second.output)
        #expect(
            Self.shared(to: "p2", second) == [sent[1], sent[3], UInt64(late)],
            "owed, and the one published before it joined")
        Self.ack(&second, "p2", sent[3])
        outputs.append(second.output)

        // Its rewritten journal (the startup rewrite, then records) says the same.
        var third = BrokerHarness.restarted(journal: DurableJournalTests.file(of: outputs))
        InstanceTests.join(&third, "p3", Self.instance("i3"))
        #expect(Self.shared(to: "p3", third) == [sent[1], UInt64(late)])
        let rewritten = JournalRecord.decodeAll(
            DurableJournalTests.file(of: [third.core.takeStartupOutput()]))
        let cursor = rewritten.records.compactMap { record -> SharedCursor? in
            if case .sharedCursor(let cursor) = record { cursor } else { nil }
        }
        #expect(
            cursor == [
                SharedCursor(
                    name: "pay", after: sent[1] - 1, since: ["app.paid": declaredAt],
                    handled: [sent[2], sent[3]])
            ])
    }
}
