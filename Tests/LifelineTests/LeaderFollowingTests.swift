import Testing

@testable import Lifeline
@testable import LifelineProtocol

/// How a plain client finds a group's leader and carries its requests there, as the SDK and the
/// CLI share it (``BrokerConnection``): pure, with an injected clock.
@Suite("Following a group's leader", .timeLimit(.minutes(1)))
struct LeaderFollowingTests {
    static let members = "tcp://127.0.0.1:1,tcp://127.0.0.1:2,tcp://127.0.0.1:3"

    static func client(_ broker: String = members) -> ConnectionHarness {
        var harness = ConnectionHarness()
        harness.session = BrokerConnection(
            configuration: ConnectionConfiguration(brokerEndpoint: broker, token: "c1"))
        harness.step { session, effects, now in session.start(now: now, into: &effects) }
        return harness
    }

    static func standbyRefusal(leader: String?) -> JSONValue {
        guard let leader else { return ["error": "broker b1 is a standby of group g", "standby": true] }
        return ["error": "broker b1 is a standby of group g", "leader": [.string(leader)], "standby": true]
    }

    static func completions(_ effects: [ConnectionEffect]) -> [(UInt64, Result<ControlReply, LifelineError>)]
    {
        effects.compactMap { effect in
            if case .deliver(.completion(let ticket, let result)) = effect { (ticket, result) } else { nil }
        }
    }

    @Test(
        "a request a standby refused goes again to the leader it names, and its caller gets the leader's reply"
    )
    func refusedRequestFollowsTheLeader() throws {
        var harness = Self.client()
        let call = ClientRequest.call(ServiceCall(service: "cart", method: "add"))
        harness.step { session, effects, now in
            session.submit(call, ticket: 1, timeoutMilliseconds: 5000, now: now, into: &effects)
        }
        let first = try #require(harness.sent.first)
        harness.reply(to: first, status: .unavailable, Self.standbyRefusal(leader: "tcp://127.0.0.1:3"))
        #expect(Self.completions(harness.effects).isEmpty, "the caller does not see the refusal")
        #expect(harness.effects.contains(.openControl))
        #expect(harness.session.currentEndpoint == "tcp://127.0.0.1:3")
        let again = try #require(harness.sent.first, "sent again at once")
        #expect(again.requestID == first.requestID && again.command == .call)
        harness.reply(to: again, ["items": 1])
        let (ticket, result) = try #require(Self.completions(harness.effects).first)
        #expect(ticket == 1)
        #expect(try result.get().status == .ok)
    }

    @Test("a 503 that is not a standby's — a service's own answer — is the caller's reply: never sent again")
    func servicesOwn503IsAnAnswer() throws {
        var harness = Self.client()
        let call = ClientRequest.call(ServiceCall(service: "cart", method: "add"))
        harness.step { session, effects, now in
            session.submit(call, ticket: 1, timeoutMilliseconds: 5000, now: now, into: &effects)
        }
        let first = try #require(harness.sent.first)
        harness.reply(
            to: first, status: .unavailable,
            ["error": "the cart's store is failing over", "leader": ["tcp://127.0.0.1:3"]])
        #expect(harness.sent.isEmpty)
        let (_, result) = try #require(Self.completions(harness.effects).first)
        #expect(try result.get().status == .unavailable, "delivered as it came; the waiter makes it an error")
        #expect(harness.session.currentEndpoint == "tcp://127.0.0.1:1", "no move")
    }

    @Test("with no leader known, the next member 100 ms later; past its deadline, the refusal is the reply")
    func noLeaderWaitsForTheElection() throws {
        var harness = Self.client()
        harness.step { session, effects, now in
            session.submit(.list, ticket: 1, timeoutMilliseconds: 300, now: now, into: &effects)
        }
        var request = try #require(harness.sent.first)
        harness.reply(to: request, status: .unavailable, Self.standbyRefusal(leader: nil))
        #expect(harness.sent.isEmpty && Self.completions(harness.effects).isEmpty)
        harness.advance(milliseconds: 50)
        #expect(harness.sent.isEmpty, "an election takes a moment")
        harness.advance(milliseconds: 60)
        #expect(harness.session.currentEndpoint == "tcp://127.0.0.1:2")
        request = try #require(harness.sent.first, "the next member, 100 ms after the refusal")
        harness.reply(to: request, status: .unavailable, Self.standbyRefusal(leader: nil))
        harness.advance(milliseconds: 110)
        request = try #require(harness.sent.first)
        #expect(harness.session.currentEndpoint == "tcp://127.0.0.1:3")
        harness.reply(to: request, status: .unavailable, Self.standbyRefusal(leader: nil))
        let (_, result) = try #require(
            Self.completions(harness.effects).first, "another 100 ms would pass its deadline")
        #expect(try result.get().standbyRefusal == .noLeader)
    }

    @Test(
        "a service whose greeting a standby refuses with no leader to name: a request still unsent at its time-out fails with the standby's sentence, not as unanswered"
    )
    func greetingRefusedWithoutLeader() throws {
        var harness = ConnectionHarness()
        var configuration = ConnectionConfiguration(
            brokerEndpoint: "tcp://127.0.0.1:1",
            registration: ServiceRegistration(
                name: "svc", instance: "i1", pid: 1, host: "h", events: [], methods: [], attachToken: "i1"),
            subscriptions: .events([]), token: "i1")
        configuration.jitter = { 1.0 }
        harness.session = BrokerConnection(configuration: configuration)
        harness.step { session, effects, now in session.start(now: now, into: &effects) }
        let hello = try #require(harness.sent.first)
        #expect(hello.command == .hello)
        harness.step { session, effects, now in
            session.submit(.list, ticket: 1, timeoutMilliseconds: 300, now: now, into: &effects)
        }
        let sentence = "broker b1 is a standby of group g, which has no leader at the moment; try again"
        harness.reply(to: hello, status: .unavailable, ["error": .string(sentence), "standby": true])
        harness.advance(milliseconds: 301)
        let (ticket, result) = try #require(Self.completions(harness.effects).first)
        #expect(ticket == 1)
        #expect(throws: LifelineError(.unavailable, sentence)) { try result.get() }
        if case .failure(let error) = result { #expect(error.isStandbyRefusal) }
    }

    @Test("standbys that name each other do not bounce a request: from the third refusal it waits 100 ms")
    func staleHintsDoNotSpin() throws {
        var harness = Self.client("tcp://127.0.0.1:1,tcp://127.0.0.1:2")
        harness.step { session, effects, now in
            session.submit(.list, ticket: 1, timeoutMilliseconds: 5000, now: now, into: &effects)
        }
        for leader in ["tcp://127.0.0.1:2", "tcp://127.0.0.1:1"] {
            let request = try #require(harness.sent.first)
            harness.reply(to: request, status: .unavailable, Self.standbyRefusal(leader: leader))
        }
        let third = try #require(harness.sent.first)
        harness.reply(to: third, status: .unavailable, Self.standbyRefusal(leader: "tcp://127.0.0.1:1"))
        #expect(harness.sent.isEmpty)
        harness.advance(milliseconds: 101)
        #expect(harness.sent.first?.command == .list)
    }

    @Test("a member that refuses the connection gives way at once, with the requests that never left it")
    func refusedMemberIsSkipped() throws {
        var harness = Self.client()
        harness.step { session, effects, now in
            session.submit(.list, ticket: 1, timeoutMilliseconds: 5000, now: now, into: &effects)
        }
        let first = try #require(harness.sent.first)
        harness.step { session, effects, now in session.controlLink(.refused, now: now, into: &effects) }
        #expect(harness.session.currentEndpoint == "tcp://127.0.0.1:2")
        #expect(harness.sent.first?.requestID == first.requestID, "sent again on the new socket")
        #expect(Self.completions(harness.effects).isEmpty)
        harness.step { session, effects, now in session.controlLink(.connected, now: now, into: &effects) }
        harness.step { session, effects, now in
            session.controlLink(.handshakeSucceeded, now: now, into: &effects)
        }
        harness.step { session, effects, now in session.controlLink(.refused, now: now, into: &effects) }
        #expect(harness.session.currentEndpoint == "tcp://127.0.0.1:2", "a member that was up is waited for")
        harness.reply(to: first, ["services": []])
        #expect(Self.completions(harness.effects).count == 1)
    }

    @Test(
        "a group's member that breaks the handshake gives way to the next; one that refuses the key fails the requests"
    )
    func groupHandshakes() throws {
        var harness = Self.client()
        harness.step { session, effects, now in
            session.submit(.list, ticket: 1, timeoutMilliseconds: 5000, now: now, into: &effects)
        }
        harness.step { session, effects, now in
            session.controlLink(.handshakeFailed(auth: false, detailed: false), now: now, into: &effects)
        }
        #expect(harness.session.currentEndpoint == "tcp://127.0.0.1:2")
        #expect(harness.sent.first?.command == .list, "the request goes with it")
        harness.step { session, effects, now in
            session.controlLink(.handshakeFailed(auth: true, detailed: true), now: now, into: &effects)
        }
        guard case .failure(let error) = Self.completions(harness.effects).first?.1 else {
            Issue.record("not failed: \(harness.effects)")
            return
        }
        #expect(error.status == .forbidden)
    }

    @Test(
        "when every member refuses the connection, a round goes again after 100 ms and requests fail as with no broker"
    )
    func everyMemberRefused() throws {
        var harness = Self.client()
        harness.step { session, effects, now in
            session.submit(.list, ticket: 1, timeoutMilliseconds: 5000, now: now, into: &effects)
        }
        for _ in 0..<3 {
            harness.step { session, effects, now in session.controlLink(.refused, now: now, into: &effects) }
        }
        #expect(harness.session.currentEndpoint == "tcp://127.0.0.1:1")
        #expect(harness.sent.isEmpty, "a round refused: 100 ms before the next")
        #expect(harness.effects.contains(.closeControl), "nothing queued reaches a member meanwhile")
        harness.step { session, effects, now in session.controlLink(.refused, now: now, into: &effects) }
        #expect(harness.effects.isEmpty, "a stale monitor event while waiting moves nothing")
        harness.advance(milliseconds: 150)
        #expect(harness.sent.first?.command == .list, "the next round")
        #expect(Self.completions(harness.effects).isEmpty)
        harness.advance(milliseconds: 650)
        guard case .failure(let error) = Self.completions(harness.effects).first?.1 else {
            Issue.record("no failure 0.8 s after the start: \(harness.effects)")
            return
        }
        #expect(
            error.message
                == "no broker answered at \(Self.members): every member refuses the connection; start one with `lifeline up`"
        )
    }

    @Test(
        "a refused key fails the requests at once with what was wrong, and later ones too, until a handshake succeeds"
    )
    func refusedKeyFailsAtOnce() throws {
        var harness = Self.client("tcp://127.0.0.1:1")
        harness.step { session, effects, now in
            session.submit(.hello, ticket: 1, timeoutMilliseconds: 5000, now: now, into: &effects)
        }
        harness.step { session, effects, now in session.controlLink(.connected, now: now, into: &effects) }
        harness.step { session, effects, now in
            session.controlLink(.handshakeFailed(auth: true, detailed: true), now: now, into: &effects)
        }
        guard case .failure(let error) = Self.completions(harness.effects).first?.1 else {
            Issue.record("not failed: \(harness.effects)")
            return
        }
        #expect(error.status == .forbidden)
        #expect(
            error.message
                == "the broker at tcp://127.0.0.1:1 refused this client's key: it is not on the broker's allow-list"
        )
        #expect(harness.effects.contains(.reopenControlDiscardingQueue), "nothing it queued goes later")
        harness.step { session, effects, now in
            session.submit(.hello, ticket: 2, timeoutMilliseconds: 5000, now: now, into: &effects)
        }
        #expect(harness.sent.isEmpty && Self.completions(harness.effects).count == 1)
        harness.now += 1_000_000_000
        harness.step { session, effects, now in
            session.submit(.hello, ticket: 3, timeoutMilliseconds: 5000, now: now, into: &effects)
        }
        #expect(
            harness.effects.first == .reopenControlDiscardingQueue, "a second later: a fresh socket tries")
        #expect(harness.sent.first?.command == .hello)
        harness.step { session, effects, now in
            session.controlLink(.handshakeSucceeded, now: now, into: &effects)
        }
        harness.step { session, effects, now in
            session.submit(.hello, ticket: 4, timeoutMilliseconds: 5000, now: now, into: &effects)
        }
        #expect(harness.sent.first?.command == .hello)
        harness.step { session, effects, now in
            session.controlLink(.handshakeFailed(auth: false, detailed: false), now: now, into: &effects)
        }
        #expect(harness.effects.isEmpty, "a handshake cut short after one succeeded is a broker going away")
    }

    @Test(
        "a broker that closes a link carrying requests fails the unrepeatable ones at once, sends the repeatable ones again on a fresh socket, and a group's client tries the next member"
    )
    func closedLinkEndsWhatItCarried() throws {
        for broker in ["tcp://127.0.0.1:1", Self.members] {
            var harness = Self.client(broker)
            harness.step { session, effects, now in session.controlLink(.connected, now: now, into: &effects)
            }
            harness.step { session, effects, now in
                session.controlLink(.handshakeSucceeded, now: now, into: &effects)
            }
            harness.step { session, effects, now in
                session.submit(.list, ticket: 1, timeoutMilliseconds: 60_000, now: now, into: &effects)
                session.submit(
                    .apps(.popToRoot, operationID: "o1"), ticket: 2, timeoutMilliseconds: 60_000, now: now,
                    into: &effects)
            }
            let repeatable = try #require(harness.sent.last)
            harness.step { session, effects, now in
                session.controlLink(.disconnected, now: now, into: &effects)
            }
            let completions = Self.completions(harness.effects)
            #expect(completions.count == 1, "\(broker): \(harness.effects)")
            guard case (1, .failure(let error))? = completions.first else {
                Issue.record("\(broker): LIST not failed: \(harness.effects)")
                continue
            }
            #expect(error.status == .unavailable)
            #expect(error.message == "the connection to the broker was lost before it answered LIST")
            let close = try #require(harness.effects.firstIndex(of: .closeControl))
            let open = try #require(harness.effects.firstIndex(of: .openControl))
            #expect(close < open, "what the old socket queued is dropped with it")
            #expect(
                harness.sent.map(\.requestID) == [repeatable.requestID], "APPS with its operation id again")
            #expect(
                harness.session.currentEndpoint
                    == (broker == Self.members ? "tcp://127.0.0.1:2" : "tcp://127.0.0.1:1"))
        }
    }

    @Test(
        "a link that closes again within 100 ms under a repeatable request is connected again 100 ms later, not at once"
    )
    func linkClosedTwiceWaits() throws {
        var harness = Self.client("tcp://127.0.0.1:1")
        let apps = ClientRequest.apps(.popToRoot, operationID: "o1")
        harness.step { session, effects, now in
            session.submit(apps, ticket: 1, timeoutMilliseconds: 60_000, now: now, into: &effects)
        }
        for round in 0..<2 {
            harness.step { session, effects, now in
                session.controlLink(.handshakeSucceeded, now: now, into: &effects)
            }
            harness.now += 10_000_000
            harness.step { session, effects, now in
                session.controlLink(.disconnected, now: now, into: &effects)
            }
            #expect(
                harness.effects.contains(.openControl) == (round == 0),
                "round \(round): at once the first time only: \(harness.effects)")
        }
        #expect(harness.sent.isEmpty, "not sent again yet")
        harness.advance(milliseconds: 110)
        #expect(harness.effects.contains(.openControl))
        #expect(harness.sent.first?.command == .apps, "sent again after the wait")
        #expect(Self.completions(harness.effects).isEmpty, "still waiting for its answer")
    }

    @Test("a closed link with nothing on it, or before any handshake, changes nothing: libzmq connects again")
    func closedIdleLinkIsLeftToLibzmq() {
        var idle = Self.client("tcp://127.0.0.1:1")
        idle.step { session, effects, now in
            session.controlLink(.handshakeSucceeded, now: now, into: &effects)
        }
        idle.step { session, effects, now in session.controlLink(.disconnected, now: now, into: &effects) }
        #expect(idle.effects.isEmpty)
        // A group's client whose member went while it was idle: the member refusing the next
        // request's connection moves it on at once.
        var group = Self.client()
        group.step { session, effects, now in
            session.controlLink(.handshakeSucceeded, now: now, into: &effects)
        }
        group.step { session, effects, now in session.controlLink(.disconnected, now: now, into: &effects) }
        group.step { session, effects, now in
            session.submit(.list, ticket: 1, timeoutMilliseconds: 5000, now: now, into: &effects)
        }
        group.step { session, effects, now in session.controlLink(.refused, now: now, into: &effects) }
        #expect(group.session.currentEndpoint == "tcp://127.0.0.1:2", "the next member, with the request")
        #expect(group.sent.first?.command == .list)
        var unshaken = Self.client("tcp://127.0.0.1:1")
        unshaken.step { session, effects, now in
            session.submit(.list, ticket: 1, timeoutMilliseconds: 5000, now: now, into: &effects)
        }
        unshaken.step { session, effects, now in session.controlLink(.disconnected, now: now, into: &effects)
        }
        #expect(unshaken.effects.isEmpty, "a handshake that never succeeded is the handshake rules' business")
    }
}
