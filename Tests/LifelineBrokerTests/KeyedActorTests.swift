import LifelineProtocol
import Testing

@testable import LifelineBroker

@Suite("Actors by key: placement, moves, releases and refusals", .timeLimit(.minutes(1)))
struct KeyedActorTests {
    /// Peers whose last 4 bytes are their connection's number, as the socket shell makes them.
    static let (first, second) = ("p1\u{0}\u{0}\u{0}\u{1}", "p2\u{0}\u{0}\u{0}\u{2}")

    /// A REGISTER header of an instance of `cart` hosting actors by key.
    static func cart(_ id: String, pid: Int, holding: [String] = [], idempotent: [String] = []) -> JSONValue {
        var registration = ServiceRegistration(
            name: "cart", instance: id, pid: pid, host: "h", events: [],
            methods: ["add", "contents", "health"],
            attachToken: id)
        registration.replicable = true
        registration.keyedMethods = ["add", "contents"]
        registration.idempotent = idempotent
        var header = registration.json.objectValue!
        if !holding.isEmpty { header["holding"] = .array(holding.map { .string($0) }) }
        return .object(header)
    }

    /// A broker past its first heartbeat window (no key is placed before it) with two instances of cart.
    static func broker(idempotent: [String] = []) -> BrokerHarness {
        var broker = BrokerHarness()
        broker.advance(milliseconds: 3001)
        join(&broker, first, cart("i1", pid: 1, idempotent: idempotent))
        join(&broker, second, cart("i2", pid: 2, idempotent: idempotent))
        return broker
    }

    @discardableResult
    static func join(_ broker: inout BrokerHarness, _ peer: String, _ header: JSONValue) -> ControlReply? {
        broker.subscribeMarker(header["attach"]?.stringValue ?? "")
        return broker.request(peer, .register, header)
    }

    static func keyed(_ key: String, _ method: String = "add", timeout: Int = 5000) -> JSONValue {
        [
            "service": "cart", "key": .string(key), "method": .string(method),
            "timeoutMs": .int(Int64(timeout)),
        ]
    }

    /// The CALL `peer` received in the last step, if any.
    static func forwarded(_ broker: BrokerHarness, to peer: String) -> ControlRequest? {
        broker.requests(to: peer).first { $0.command == .call }
    }

    /// Sends a request and returns the reply that came at once.
    static func send(
        _ broker: inout BrokerHarness, _ peer: String, _ command: Command, _ header: JSONValue = .emptyObject
    ) throws -> ControlReply {
        let reply = broker.request(peer, command, header)
        return try #require(reply)
    }

    static func answer(_ broker: inout BrokerHarness, _ call: ControlRequest, from peer: String) {
        broker.raw(peer, ControlReply(requestID: call.requestID, json: ["ok": true]).frames())
    }

    static func placements(_ broker: inout BrokerHarness, _ service: String? = "cart") throws
        -> [ActorPlacement]
    {
        let reply = try Self.send(&broker, "cli", .actors, service.map { ["service": .string($0)] } ?? [:])
        #expect(reply.status == .ok)
        return try (reply.json()["actors"]?.arrayValue ?? []).map { try ActorPlacement(json: $0) }
    }

    @Test("the first call places a key on the instance with the fewest; later calls follow it")
    func placement() throws {
        var broker = Self.broker()
        broker.request("c1", .call, Self.keyed("ana"))
        let toFirst = try #require(Self.forwarded(broker, to: Self.first), "a tie: the first instance")
        #expect(toFirst.header["key"] == "ana" && toFirst.header["service"] == "cart")
        Self.answer(&broker, toFirst, from: Self.first)
        #expect(broker.replies(to: "c1").first?.status == .ok)
        broker.request("c2", .call, Self.keyed("bob"))
        let toSecond = try #require(Self.forwarded(broker, to: Self.second), "the other holds no key")
        Self.answer(&broker, toSecond, from: Self.second)
        for _ in 0..<3 {
            broker.request("c3", .call, Self.keyed("ana", "contents"))
            let again = try #require(Self.forwarded(broker, to: Self.first), "ana stays where it was placed")
            Self.answer(&broker, again, from: Self.first)
        }
        let listed = try Self.placements(&broker)
        #expect(listed.map(\.key) == ["ana", "bob"])
        #expect(listed.map(\.instance) == ["i1", "i2"])
        #expect(listed.map(\.pid) == [1, 2] && listed.map(\.calls) == [4, 1])
        #expect(listed.allSatisfy { $0.inFlight == 0 && !$0.waiting })
        #expect(try Self.placements(&broker, nil).count == 2)
    }

    @Test("bad keys, keys for a service without actors by key, and keyless calls to keyed methods are 400s")
    func refusals() throws {
        var broker = Self.broker()
        broker.register("plain", peer: "p3", methods: ["status"])
        let cases: [(JSONValue, String)] = [
            (
                ["service": "cart", "key": "a b", "method": "add"],
                "CALL 'key': actor key 'a b' may contain only letters, digits and _ - . : @ + = /"
            ),
            (["service": "cart", "key": "", "method": "add"], "CALL 'key': an actor key cannot be empty"),
            (
                ["service": "cart", "key": .string(String(repeating: "k", count: 129)), "method": "add"],
                "CALL 'key': an actor key is at most 128 bytes, got 129"
            ),
            (
                ["service": "plain", "key": "ana", "method": "status"],
                "service 'plain' hosts no actors by key: call it as 'plain', without a key"
            ),
            (
                ["service": "cart", "method": "add"],
                "'add' of 'cart' is a method of its actors by key: call it as 'cart/KEY'"
            ),
            (
                ["service": "cart", "key": "ana", "method": "health"],
                "'health' of 'cart' is not a method of its actors by key (add, contents): call it without a key"
            ),
        ]
        for (header, message) in cases {
            let reply = try Self.send(&broker, "c", .call, header)
            #expect(reply.status == .badRequest)
            #expect(reply.errorMessage.hasSuffix(message), "\(header)")
        }
        #expect(broker.requests(to: Self.first).isEmpty && broker.requests(to: Self.second).isEmpty)
        #expect(try Self.placements(&broker).isEmpty, "nothing was placed")
        #expect(broker.request("cli", .actors, ["service": "nope"])?.status == .notFound)
        let plain = try Self.send(&broker, "cli", .actors, ["service": "plain"])
        #expect(plain.status == .badRequest && plain.errorMessage == "service 'plain' hosts no actors by key")
        var bad = Self.cart("i9", pid: 9).objectValue!
        bad["keyed"] = ["nope"]
        let refusedReply = Self.join(&broker, "p9", .object(bad))
        let refused = try #require(refusedReply)
        #expect(refused.status == .badRequest)
        #expect(refused.errorMessage.contains("REGISTER 'keyed' must name methods listed in 'methods'"))
    }

    @Test("RELEASE forgets a placement unless a call to it is on its way; only its instance may send it")
    func release() throws {
        var broker = Self.broker()
        broker.request("c1", .call, Self.keyed("ana"))
        let call = try #require(Self.forwarded(broker, to: Self.first))
        let busy = try Self.send(&broker, Self.first, .release, ["service": "cart", "key": "ana"])
        #expect(try busy.json() == ["released": false, "inFlight": 1])
        let stranger = try Self.send(&broker, "cli", .release, ["service": "cart", "key": "ana"])
        #expect(stranger.status == .forbidden)
        #expect(stranger.errorMessage == "RELEASE: this connection serves no instance of 'cart'")
        let other = try Self.send(&broker, Self.second, .release, ["service": "cart", "key": "ana"])
        #expect(try other.json() == ["released": true], "not placed there: nothing to forget")
        #expect(try Self.placements(&broker).map(\.instance) == ["i1"])
        Self.answer(&broker, call, from: Self.first)
        let released = try Self.send(&broker, Self.first, .release, ["service": "cart", "key": "ana"])
        #expect(try released.json() == ["released": true])
        #expect(try Self.placements(&broker).isEmpty)
        // Placed again by its next call, on the instance with the fewest keys.
        broker.request("c2", .call, Self.keyed("bob"))
        #expect(Self.forwarded(broker, to: Self.first) != nil)
        broker.request("c3", .call, Self.keyed("ana"))
        #expect(Self.forwarded(broker, to: Self.second) != nil)
        let badKey = try Self.send(&broker, Self.first, .release, ["service": "cart", "key": "a b"])
        #expect(badKey.status == .badRequest)
    }

    @Test("a key of a cut-off instance waits for its window; then it moves and its held call goes on")
    func move() throws {
        var broker = Self.broker()
        broker.request("c1", .call, Self.keyed("ana"))
        Self.answer(&broker, try #require(Self.forwarded(broker, to: Self.first)), from: Self.first)
        broker.advance(milliseconds: 500)
        broker.core.connectionsClosed([1], now: broker.instant, into: &broker.output)
        broker.request("c2", .call, Self.keyed("ana", timeout: 10_000))
        #expect(broker.requests(to: Self.second).isEmpty, "the old instance may still run it")
        #expect(broker.replies(to: "c2").isEmpty, "the call waits")
        #expect(try Self.placements(&broker).first?.waiting == true)
        // A call to a key placed nowhere still goes to the connected instance.
        broker.request("c3", .call, Self.keyed("bob"))
        Self.answer(&broker, try #require(Self.forwarded(broker, to: Self.second)), from: Self.second)
        var moved: ControlRequest?
        for _ in 0..<30 where moved == nil {
            broker.request(Self.second, .heartbeat, ["name": "cart"])
            broker.advance(milliseconds: 100)
            moved = Self.forwarded(broker, to: Self.second)
        }
        let call = try #require(moved, "placed again once the first instance expired")
        #expect(broker.now >= 1_000_000_000 + 3_001_000_000 + 3_000_000_000, "not before its window passed")
        #expect(call.header["key"] == "ana")
        Self.answer(&broker, call, from: Self.second)
        #expect(broker.replies(to: "c2").first?.status == .ok)
        #expect(try Self.placements(&broker).map(\.instance) == ["i2", "i2"])
    }

    @Test(
        "a held call's 504 gives the reason of the moment: once the cut-off instance expired, that it may still run a call sent there"
    )
    func heldReasonFollowsTheInstance() throws {
        var broker = Self.broker()
        broker.request("c1", .call, Self.keyed("ana", timeout: 20_000))
        _ = try #require(Self.forwarded(broker, to: Self.first))
        broker.core.connectionsClosed([1], now: broker.instant, into: &broker.output)
        broker.request("c2", .call, Self.keyed("ana", timeout: 6000))
        var reply: ControlReply?
        for _ in 0..<70 where reply == nil {
            broker.request(Self.second, .heartbeat, ["name": "cart"])
            broker.advance(milliseconds: 100)
            reply = broker.replies(to: "c2").first
        }
        let held = try #require(reply, "answered at its deadline")
        #expect(held.status == .timeout)
        #expect(
            held.errorMessage
                == "cart/ana.add did not answer within 6000 ms: the actor's instance went away while it may still run it (revoked within its heartbeat window, or with a call sent there before its deadline), so the key could not move (retry)"
        )
    }

    @Test("the last instance expiring with calls held: they fail 503 naming the reason")
    func lastInstanceGone() throws {
        var broker = BrokerHarness()
        broker.advance(milliseconds: 3001)
        Self.join(&broker, Self.first, Self.cart("i1", pid: 1))
        broker.request("c1", .call, Self.keyed("ana"))
        Self.answer(&broker, try #require(Self.forwarded(broker, to: Self.first)), from: Self.first)
        broker.core.connectionsClosed([1], now: broker.instant, into: &broker.output)
        broker.request("c2", .call, Self.keyed("ana", timeout: 20_000))
        broker.request("c3", .call, Self.keyed("bob", timeout: 20_000))
        var replies: [ControlReply] = []
        for _ in 0..<40 where replies.count < 2 {
            broker.advance(milliseconds: 100)
            replies += broker.replies(to: "c2") + broker.replies(to: "c3")
        }
        #expect(replies.map(\.status) == [.unavailable, .unavailable])
        #expect(
            replies.map(\.errorMessage) == [
                "service 'cart' went away (expired) before cart/ana could be placed",
                "service 'cart' went away (expired) before cart/bob could be placed",
            ])
    }

    @Test("a held call whose deadline passes first gets 504, saying to retry")
    func heldTimeout() throws {
        var broker = Self.broker()
        broker.request("c1", .call, Self.keyed("ana"))
        Self.answer(&broker, try #require(Self.forwarded(broker, to: Self.first)), from: Self.first)
        broker.core.connectionsClosed([1], now: broker.instant, into: &broker.output)
        broker.request("c2", .call, Self.keyed("ana", timeout: 400))
        broker.request(Self.second, .heartbeat, ["name": "cart"])
        broker.advance(milliseconds: 500)
        let reply = try #require(broker.replies(to: "c2").first)
        #expect(reply.status == .timeout)
        #expect(
            reply.errorMessage
                == "cart/ana.add did not answer within 400 ms: the actor's instance went away and its heartbeat window has not passed yet, so the key could not move (retry)"
        )
        #expect(try Self.placements(&broker).map(\.instance) == ["i1"], "still placed where it was")

        // Held within a new broker's first window, the 504 says so.
        var fresh = BrokerHarness()
        Self.join(&fresh, Self.first, Self.cart("i1", pid: 1))
        fresh.request("c3", .call, Self.keyed("ana", timeout: 300))
        fresh.request(Self.first, .heartbeat, ["name": "cart"])
        fresh.advance(milliseconds: 400)
        let early = try #require(fresh.replies(to: "c3").first)
        #expect(early.status == .timeout)
        #expect(
            early.errorMessage
                == "cart/ana.add did not answer within 300 ms: the broker started or took over its group less than a heartbeat window ago and places no key anew until its instances have registered again (retry)"
        )
    }

    @Test(
        "a keyed call cut off mid-call: an idempotent one waits and goes to its instance when it is back, any other fails with 503"
    )
    func cutOffMidCall() throws {
        var broker = Self.broker(idempotent: ["contents"])
        broker.request("c1", .call, Self.keyed("ana", "contents", timeout: 10_000))
        _ = try #require(Self.forwarded(broker, to: Self.first))
        broker.request("c2", .call, Self.keyed("ana", "add", timeout: 10_000))
        _ = try #require(Self.forwarded(broker, to: Self.first))
        broker.output.removeAll()
        broker.core.connectionsClosed([1], now: broker.instant, into: &broker.output)
        #expect(broker.replies(to: "c1").isEmpty, "the idempotent call waits for the key")
        #expect(broker.replies(to: "c2").first?.status == .unavailable)
        // The instance reconnects (a new connection, the same instance) and registers again.
        let back = "p3\u{0}\u{0}\u{0}\u{3}"
        Self.join(&broker, back, Self.cart("i1", pid: 1, holding: ["ana"], idempotent: ["contents"]))
        let resent = try #require(Self.forwarded(broker, to: back), "sent again to the key's instance")
        #expect(resent.header["method"] == "contents")
        Self.answer(&broker, resent, from: back)
        #expect(broker.replies(to: "c1").first?.status == .ok)
    }

    @Test(
        "an instance that expires with a call on its way keeps its keys until that call's deadline: they never run in two places"
    )
    func busyUntilDeadline() throws {
        var broker = Self.broker()
        broker.request("c1", .call, Self.keyed("ana", timeout: 8000))
        _ = try #require(Self.forwarded(broker, to: Self.first))
        let sentAt = broker.now
        broker.core.connectionsClosed([1], now: broker.instant, into: &broker.output)
        #expect(broker.replies(to: "c1").first?.status == .unavailable)
        broker.request("c2", .call, Self.keyed("ana", timeout: 20_000))
        var moved: ControlRequest?
        for _ in 0..<120 where moved == nil {
            broker.request(Self.second, .heartbeat, ["name": "cart"])
            broker.advance(milliseconds: 100)
            moved = Self.forwarded(broker, to: Self.second)
        }
        _ = try #require(moved)
        #expect(broker.now >= sentAt + 8_000_000_000, "not before the first call's deadline, past the window")
        #expect(broker.replies(to: "c2").isEmpty, "the waiting call went on")
    }

    @Test(
        "an idempotent keyed call on an instance that expires while connected is not sent elsewhere before its deadline"
    )
    func expiredWhileConnected() throws {
        var broker = Self.broker(idempotent: ["contents"])
        broker.request("c1", .call, Self.keyed("ana", "contents", timeout: 6000))
        _ = try #require(Self.forwarded(broker, to: Self.first))
        var elsewhere = 0
        var reply: ControlReply?
        for _ in 0..<80 where reply == nil {
            broker.request(Self.second, .heartbeat, ["name": "cart"])
            broker.advance(milliseconds: 100)
            elsewhere += broker.requests(to: Self.second).filter { $0.command == .call }.count
            reply = broker.replies(to: "c1").first
        }
        #expect(elsewhere == 0, "the first instance may still be running it")
        #expect(reply?.status == .timeout)
        broker.request("c2", .call, Self.keyed("ana", "contents"))
        #expect(Self.forwarded(broker, to: Self.second) != nil, "after its deadline the key moves")
    }

    @Test("a clean UNREGISTER frees its keys at once")
    func unregister() throws {
        var broker = Self.broker()
        broker.request("c1", .call, Self.keyed("ana"))
        Self.answer(&broker, try #require(Self.forwarded(broker, to: Self.first)), from: Self.first)
        broker.request(Self.first, .unregister, ["name": "cart"])
        broker.request("c2", .call, Self.keyed("ana"))
        #expect(Self.forwarded(broker, to: Self.second) != nil)
    }

    @Test("after a broker start no key is placed for a window; instances that still hold keys keep them")
    func restartGrace() throws {
        var broker = BrokerHarness()
        Self.join(&broker, Self.first, Self.cart("i1", pid: 1))
        broker.request("c1", .call, Self.keyed("ana"))
        #expect(Self.forwarded(broker, to: Self.first) == nil, "held within the broker's first window")
        broker.request("c2", .call, Self.keyed("bob"))
        // An instance that held ana for the previous broker registers again, saying so.
        Self.join(&broker, Self.second, Self.cart("i2", pid: 2, holding: ["ana"]))
        let adopted = try #require(
            Self.forwarded(broker, to: Self.second), "its held call goes to it at once")
        #expect(adopted.header["key"] == "ana")
        Self.answer(&broker, adopted, from: Self.second)
        #expect(broker.replies(to: "c1").first?.status == .ok)
        #expect(broker.replies(to: "c2").isEmpty, "bob waits for the window")
        var placed: ControlRequest?
        for _ in 0..<40 where placed == nil {
            broker.request(Self.first, .heartbeat, ["name": "cart"])
            broker.request(Self.second, .heartbeat, ["name": "cart"])
            broker.advance(milliseconds: 100)
            placed = Self.forwarded(broker, to: Self.first)
        }
        #expect(try #require(placed).header["key"] == "bob", "placed on the instance with fewer keys")
        var plain = BrokerHarness.registration("plain").objectValue!
        plain["holding"] = ["ana"]
        let holdingPlain = try Self.send(&broker, "p3", .register, .object(plain))
        #expect(holdingPlain.status == .badRequest)
        #expect(
            holdingPlain.errorMessage.contains(
                "REGISTER 'holding' names actor keys, but the service hosts no actors by key"))
    }
}
