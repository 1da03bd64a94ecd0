import LifelineProtocol
import Testing

@testable import LifelineBroker

@Suite("Several instances of one service: joining, balancing, failover", .timeLimit(.minutes(1)))
struct InstanceTests {
    @Test("counts the instances report are summed without wrapping: LIST and STATS stay readable")
    func hugeCounts() throws {
        var broker = BrokerHarness()
        #expect(Self.join(&broker, "p1", Self.instance("pay", "i1", pid: 1))?.status == .ok)
        #expect(Self.join(&broker, "p2", Self.instance("pay", "i2", pid: 2))?.status == .ok)
        for peer in ["p1", "p2"] {
            _ = broker.request(
                peer, .heartbeat, ["dropped": .int(.max), "queued": .int(.max), "name": "pay"])
        }
        let listedReply = broker.request("cli", .list)
        let listed = try #require(listedReply)
        let records = try ServiceList(bytes: listed.body).services
        #expect(records.first?.dropped == UInt64(Int64.max))
        let stats = broker.request("cli", .stats)
        #expect(stats?.status == .ok)
    }

    /// A REGISTER header of an instance of `name`.
    static func instance(
        _ name: String, _ id: String, pid: Int = 100, methods: [String] = ["resolve", "charge"],
        idempotent: [String] = ["resolve"], replicable: Bool = true,
        events: [EventName] = [.didEnterBackground], shared: [EventName] = []
    ) -> JSONValue {
        var registration = ServiceRegistration(
            name: name, instance: id, pid: pid, host: "h", events: events, methods: methods, attachToken: id)
        registration.replicable = replicable
        registration.idempotent = idempotent
        registration.shared = shared
        return registration.json
    }

    @discardableResult
    static func join(_ broker: inout BrokerHarness, _ peer: String, _ header: JSONValue) -> ControlReply? {
        broker.subscribeMarker(header["attach"]?.stringValue ?? "")
        return broker.request(peer, .register, header)
    }

    static func payloads(_ broker: BrokerHarness) -> [(EventName, JSONValue)] {
        broker.published.map { ($0.name, (try? JSONParser.parse($0.payload)) ?? .null) }
    }

    @Test("instances join a replicable name under one record; serviceDidStart once, a join event each")
    func joining() throws {
        var broker = BrokerHarness()
        #expect(Self.join(&broker, "p1", Self.instance("pay", "i1", pid: 1))?.status == .ok)
        #expect(broker.published.map(\.name) == [.serviceDidStart, .serviceInstanceDidJoin])
        #expect(Self.join(&broker, "p2", Self.instance("pay", "i2", pid: 2))?.status == .ok)
        let joined = Self.payloads(broker)
        #expect(joined.map(\.0) == [.serviceInstanceDidJoin])
        #expect(joined.first?.1["instances"] == 2 && joined.first?.1["pid"] == 2)
        #expect(Self.join(&broker, "p3", Self.instance("pay", "i3", pid: 3))?.status == .ok)
        let foundReply = broker.request("cli", .lookup, ["name": "pay"])
        let found = try #require(foundReply)
        let record = try ServiceRecord(json: found.json())
        #expect(record.instances.map(\.pid) == [1, 2, 3])
        #expect(record.replicable && record.pid == 1)
        #expect(try found.json()["replicable"] == true)
        let listedReply = broker.request("cli", .list)
        let listed = try #require(listedReply)
        #expect(try listed.json()["services"]?.arrayValue?.count == 1)
    }

    @Test(
        "an instance that differs, one that does not say it is replicable, or a second on one connection is refused"
    )
    func refusals() throws {
        var broker = BrokerHarness()
        Self.join(&broker, "p1", Self.instance("pay", "i1"))
        let otherReply = Self.join(&broker, "p2", Self.instance("pay", "i2", methods: ["resolve"]))
        let other = try #require(otherReply)
        #expect(other.status == .conflict)
        #expect(
            other.errorMessage
                == "pid 100 on 'h' may not be an instance of 'pay': its methods differ: this one has no charge"
        )
        let plainReply = Self.join(&broker, "p3", Self.instance("pay", "i3", replicable: false))
        let plain = try #require(plainReply)
        #expect(plain.status == .conflict)
        #expect(plain.errorMessage.contains("the name's instances say they are several (replicable)"))
        let twiceReply = Self.join(&broker, "p1", Self.instance("pay", "i4"))
        let twice = try #require(twiceReply)
        #expect(
            twice.status == .conflict && twice.errorMessage.contains("another instance needs its own process")
        )
        // A single-instance name is as it always was: a second process is a 409 naming the holder.
        Self.join(&broker, "q1", Self.instance("solo", "s1", replicable: false))
        let secondReply = Self.join(&broker, "q2", Self.instance("solo", "s2", replicable: false))
        let second = try #require(secondReply)
        #expect(second.status == .conflict && second.errorMessage.contains("already registered by pid 100"))
        let badReply = broker.request(
            "p9", .register, Self.instance("x", "x1", methods: ["a"], idempotent: ["b"]))
        let bad = try #require(badReply)
        #expect(bad.status == .badRequest)
        #expect(bad.errorMessage == "REGISTER 'idempotent' must name methods listed in 'methods'")
    }

    @Test(
        "with CURVE, instances join under the key that registered the name; another key's is refused as a takeover"
    )
    func keys() {
        var registration = ServiceRegistration(
            name: "pay", instance: "i1", pid: 1, host: "h", events: [], methods: ["charge"], attachToken: "t")
        registration.replicable = true
        var registry = ServiceRegistry()
        #expect(registry.admit(registration, peer: [1], owner: "KEY-A", now: 0) == .added)
        registration.instance = "i2"
        #expect(registry.admit(registration, peer: [2], owner: "KEY-A", now: 1) == .joined(instances: 2))
        registration.instance = "i3"
        #expect(registry.admit(registration, peer: [3], owner: "KEY-B", now: 2) == .foreign(owner: "KEY-A"))
        #expect(registry.entry(named: "pay")?.instances.map(\.peer) == [[1], [2]])
        // An instance back on a new connection (a reconnect, or a new leader of a group) takes its place.
        registration.instance = "i1"
        #expect(registry.admit(registration, peer: [4], owner: "KEY-A", now: 3) == .renewed)
        #expect(registry.entry(named: "pay")?.instances.map(\.peer) == [[4], [2]])
    }

    @Test("calls go to the instance with the fewest in flight, ties in turn")
    func balancing() throws {
        var broker = BrokerHarness()
        for (peer, id) in [("p1", "i1"), ("p2", "i2"), ("p3", "i3")] {
            Self.join(&broker, peer, Self.instance("pay", id))
        }
        var receivers: [String] = []
        var pending: [String: ControlRequest] = [:]
        for _ in 0..<3 {
            broker.request("cli", .call, ["service": "pay", "method": "charge"])
            for peer in ["p1", "p2", "p3"] {
                if let call = broker.requests(to: peer).first(where: { $0.command == .call }) {
                    receivers.append(peer)
                    pending[peer] = call
                }
            }
        }
        #expect(Set(receivers) == ["p1", "p2", "p3"], "one each before any gets a second")
        // p2 answers: it has the fewest in flight now, so the next call is its.
        let call = try #require(pending["p2"])
        broker.raw("p2", ControlReply(requestID: call.requestID, json: ["ok": true]).frames())
        #expect(broker.replies(to: "cli").first?.status == .ok)
        broker.request("cli", .call, ["service": "pay", "method": "charge"])
        #expect(broker.requests(to: "p2").first?.command == .call)
        // Per-instance figures: STATS and /metrics.
        let statsReply = broker.request("cli", .stats)
        let stats = try #require(statsReply).json()["services"]?["pay"]?["instances"]?.arrayValue ?? []
        #expect(stats.map { $0["answered"] } == [0, 1, 0])
        #expect(stats.map { $0["inFlight"] } == [1, 1, 1])
        let metrics = broker.core.metricsText(handshakesRefused: 0)
        #expect(metrics.contains(#"lifeline_service_instances{service="pay"} 3"#))
        #expect(metrics.contains(#"lifeline_instance_calls_answered_total{service="pay",instance="i2"} 1"#))
    }

    @Test(
        "an instance that leaves mid-call: an idempotent call goes to another, any other fails at once with 503"
    )
    func failover() throws {
        var broker = BrokerHarness()
        // Peers whose last 4 bytes are their connection's number, as the socket shell makes them.
        let (first, second) = ("p1\u{0}\u{0}\u{0}\u{1}", "p2\u{0}\u{0}\u{0}\u{2}")
        Self.join(&broker, first, Self.instance("pay", "i1"))
        Self.join(&broker, second, Self.instance("pay", "i2"))
        broker.request("c1", .call, ["service": "pay", "method": "resolve", "timeoutMs": 4000])
        #expect(broker.requests(to: first).first?.command == .call, "a tie: the first in turn")
        broker.request("c2", .call, ["service": "pay", "method": "charge"])
        #expect(broker.requests(to: second).first?.command == .call, "the other had none in flight")

        broker.advance(milliseconds: 1000)
        broker.output.removeAll()
        broker.core.connectionsClosed([1], now: broker.instant, into: &broker.output)
        let resentCall = broker.requests(to: second).first { $0.command == .call }
        let resent = try #require(resentCall)
        #expect(resent.header["method"] == "resolve")
        #expect(resent.header["timeoutMs"] == 3000, "the same deadline: what is left of it")
        #expect(broker.replies(to: "c1").isEmpty, "the idempotent call waits for its new instance")
        broker.raw(second, ControlReply(requestID: resent.requestID, json: ["route": "x"]).frames())
        #expect(broker.replies(to: "c1").first?.status == .ok)
        // A cut-off instance gets no new calls.
        broker.request("c3", .call, ["service": "pay", "method": "resolve"])
        #expect(broker.requests(to: first).isEmpty)
        #expect(broker.requests(to: second).first?.command == .call)

        broker.output.removeAll()
        broker.core.connectionsClosed([2], now: broker.instant, into: &broker.output)
        let charged = try #require(broker.replies(to: "c2").first)
        #expect(charged.status == .unavailable)
        #expect(
            charged.errorMessage
                == "the instance of 'pay' answering charge lost its connection before answering")
        let resolved = try #require(broker.replies(to: "c3").first)
        #expect(resolved.status == .unavailable)
        #expect(resolved.errorMessage.hasSuffix("before answering; no other instance is connected"))
        let noneReply = broker.request("c4", .call, ["service": "pay", "method": "charge"])
        let none = try #require(noneReply)
        #expect(none.status == .unavailable && none.errorMessage.contains("has no connected instance"))
    }

    @Test("instances expire one by one: a leave event each, serviceDidStop with the last")
    func leaving() throws {
        var broker = BrokerHarness()
        Self.join(&broker, "p1", Self.instance("pay", "i1", pid: 1))
        broker.advance(milliseconds: 2000)
        Self.join(&broker, "p2", Self.instance("pay", "i2", pid: 2))
        broker.request("c1", .call, ["service": "pay", "method": "resolve", "timeoutMs": 60000])
        broker.request("c2", .call, ["service": "pay", "method": "charge", "timeoutMs": 60000])
        broker.advance(milliseconds: 1500)  // p1 silent past its 3 s window; p2 heard 1.5 s ago
        let left = Self.payloads(broker)
        #expect(left.map(\.0) == [.serviceInstanceDidLeave])
        #expect(left.first?.1["reason"] == "expired" && left.first?.1["instances"] == 1)
        let foundReply = broker.request("cli", .lookup, ["name": "pay"])
        let found = try #require(foundReply)
        #expect(try ServiceRecord(json: found.json()).instances.map(\.pid) == [2])
        broker.advance(milliseconds: 2000)
        #expect(Self.payloads(broker).map(\.0) == [.serviceInstanceDidLeave, .serviceDidStop])
        #expect(broker.request("cli", .lookup, ["name": "pay"])?.status == .notFound)
    }

    @Test(
        "a replicable name's start hook runs once on each connected instance, also when its first instance's connection closed"
    )
    func startOncePerInstance() throws {
        var broker = BrokerHarness()
        let (first, second, third) = (
            "p1\u{0}\u{0}\u{0}\u{1}", "p2\u{0}\u{0}\u{0}\u{2}", "p3\u{0}\u{0}\u{0}\u{3}"
        )
        Self.join(&broker, first, Self.instance("r", "i1"))
        Self.join(&broker, second, Self.instance("r", "i2"))
        Self.join(&broker, third, Self.instance("r", "i3"))
        broker.core.connectionsClosed([1], now: broker.instant, into: &broker.output)
        broker.output.removeAll()
        broker.request("cli", .boot, ["op": "start"])
        let run = try #require(broker.requests(to: second).first { $0.command == .boot })
        #expect(run.header["task"] == "r.start" && run.header["kind"] == "start")
        broker.output.removeAll()
        _ = broker.raw(second, ControlReply(requestID: run.requestID, json: ["outcome": "done"]).frames())
        #expect(
            !broker.requests(to: second).contains { $0.command == .start },
            "its start hook ran once, by the boot")
        #expect(broker.requests(to: third).filter { $0.command == .start }.count == 1, "the other gets START")
        #expect(broker.requests(to: first).isEmpty, "nothing to a closed connection")
        let back = "p1\u{0}\u{0}\u{0}\u{4}"
        Self.join(&broker, back, Self.instance("r", "i1"))
        #expect(
            broker.requests(to: back).filter { $0.command == .start }.count == 1,
            "the instance whose connection had closed gets START when it registers again")
        Self.join(&broker, "p2\u{0}\u{0}\u{0}\u{5}", Self.instance("r", "i2"))
        #expect(
            broker.requests(to: "p2\u{0}\u{0}\u{0}\u{5}").filter { $0.command == .start }.isEmpty,
            "one that started does not")
    }

    @Test("an acknowledged event waits for every instance of a name")
    func acknowledgements() throws {
        var broker = BrokerHarness()
        Self.join(&broker, "p1", Self.instance("pay", "i1", events: ["app.paid"]))
        Self.join(&broker, "p2", Self.instance("pay", "i2", events: ["app.paid"]))
        broker.request("pub", .publish, ["event": "app.paid", "ack": true])
        let sequence = try #require(broker.published.first { $0.name == "app.paid" }?.header.sequence)
        let ack: JSONValue = ["sequence": .int(Int64(sequence)), "name": "pay"]
        broker.request("p1", .ack, ack)
        #expect(broker.replies(to: "pub").isEmpty, "one instance of two has acknowledged")
        broker.request("p2", .ack, ack)
        let receipt = try #require(broker.replies(to: "pub").first)
        #expect(try receipt.json()["acknowledged"] == ["pay"])
    }
}
