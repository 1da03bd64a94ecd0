import LifelineProtocol
import Testing

@testable import Lifeline

/// Drives a ``BrokerConnection`` like its socket thread would, with an injected clock.
struct ConnectionHarness {
    var session: BrokerConnection
    var now: UInt64 = 1_000_000_000
    var effects: [ConnectionEffect] = []
    /// The sequences of each run of live events delivered in the last step.
    var runs: [[UInt64]] = []
    let epoch: UInt64 = 77

    init(resume: EventCursor? = nil, jitter: Double = 1.0, dropped: UInt64 = 0) {
        var configuration = ConnectionConfiguration(
            brokerEndpoint: "tcp://127.0.0.1:1",
            registration: ServiceRegistration(
                name: "svc", instance: "i1", pid: 1, host: "h", events: ["app.a", "app.b"], methods: [],
                attachToken: "i1"),
            subscriptions: .events(["app.a", "app.b"]), token: "i1")
        configuration.resume = resume
        configuration.jitter = { jitter }
        configuration.droppedEvents = { dropped }
        session = BrokerConnection(configuration: configuration)
    }

    /// The requests the session sent in the last step.
    var sent: [ControlRequest] {
        effects.compactMap { effect in
            guard case .sendControl(let frames) = effect,
                case .request(let request)? = try? ControlMessage.decode(frames[...])
            else { return nil }
            return request
        }
    }

    /// The events delivered in the last step, as (sequence, replayed).
    var delivered: [(UInt64, Bool)] {
        effects.compactMap { effect in
            if case .deliver(.event(let message, _, let replayed)) = effect {
                return (message.header.sequence, replayed)
            }
            return nil
        }
    }

    /// Runs one step; a run of live events (``ConnectionEffect/deliverRun(_:receivedAt:)``) is
    /// listed as the deliveries of its events one by one, as the socket thread makes them when the
    /// application takes no run, and its sequences are kept in ``runs``.
    mutating func step(_ body: (inout BrokerConnection, inout [ConnectionEffect], UInt64) -> Void) {
        var raw: [ConnectionEffect] = []
        body(&session, &raw, now)
        runs = []
        effects = raw.flatMap { effect -> [ConnectionEffect] in
            guard case .deliverRun(let run, let receivedAt) = effect else { return [effect] }
            runs.append(run.map(\.header.sequence))
            return run.map { .deliver(.event($0, receivedAt: receivedAt, replayed: false)) }
        }
    }

    mutating func reply(to request: ControlRequest, status: Status = .ok, _ body: JSONValue) {
        let frames = ControlReply(requestID: request.requestID, status: status, json: body).frames()
        step { session, effects, now in session.handleControl(frames, now: now, into: &effects) }
    }

    mutating func bus(_ name: EventName, sequence: UInt64, topicSequence: UInt64, epoch: UInt64? = nil) {
        let message = BusMessage(
            name: name,
            header: BusHeader(
                epoch: epoch ?? self.epoch, sequence: sequence, topicSequence: topicSequence,
                publishedWallNanoseconds: 0,
                publishedMonotonicNanoseconds: 0),
            payload: Array("{}".utf8))
        step { session, effects, _ in session.handleBus(message.frames(), into: &effects) }
    }

    /// One bus message of several events of `name` (`epoch` nil: the session's).
    mutating func bus(_ name: EventName, events: [(sequence: UInt64, topicSequence: UInt64, epoch: UInt64?)])
    {
        let messages = events.map { event in
            BusMessage(
                name: name,
                header: BusHeader(
                    epoch: event.epoch ?? epoch, sequence: event.sequence, topicSequence: event.topicSequence,
                    publishedWallNanoseconds: 0, publishedMonotonicNanoseconds: 0),
                payload: Array("{}".utf8))
        }
        step { session, effects, _ in session.handleBus(BusMessage.frames(batch: messages), into: &effects) }
    }

    mutating func journalEvent(
        _ name: EventName, sequence: UInt64, topicSequence: UInt64, epoch: UInt64? = nil
    ) {
        let header: JSONValue = [
            "event": .string(name.rawValue), "sequence": .int(Int64(sequence)),
            "topicSequence": .int(Int64(topicSequence)), "epoch": .int(Int64(epoch ?? self.epoch)),
        ]
        let frames = ControlRequest(.event, header: header, payload: Array("{}".utf8)).frames()
        step { session, effects, now in session.handleControl(frames, now: now, into: &effects) }
    }

    mutating func advance(milliseconds: Int) {
        now += UInt64(milliseconds) * 1_000_000
        step { session, effects, now in session.tick(now: now, into: &effects) }
    }

    /// Starts, greets and sends REGISTER; returns the REGISTER request.
    mutating func join() -> ControlRequest {
        step { session, effects, now in session.start(now: now, into: &effects) }
        let hello = sent.first!
        reply(to: hello, ["bus": "tcp://127.0.0.1:2", "epoch": .int(Int64(epoch))])
        return sent.first!
    }
}

@Suite("Broker connection: snapshot, dedupe, gaps, reconnects", .timeLimit(.minutes(1)))
struct BrokerConnectionTests {
    @Test(
        "after a broker restart without its journal, the new epoch's events are replayed from its start, once"
    )
    func newEpochReplayedOnce() throws {
        var harness = ConnectionHarness()
        let register = harness.join()
        harness.reply(
            to: register, ["epoch": 77, "sequence": 0, "heartbeat": ["intervalMs": 1000, "liveness": 3]])
        for sequence in 1...3 {
            harness.bus("app.a", sequence: UInt64(sequence), topicSequence: UInt64(sequence))
        }
        harness.advance(milliseconds: 3001)
        harness.advance(milliseconds: 250)
        #expect(harness.effects.first == .openControl)
        let hello = try #require(harness.sent.first)
        harness.reply(to: hello, ["bus": "tcp://127.0.0.1:2", "epoch": 99])
        let again = try #require(harness.sent.first)
        #expect(again.command == .register)
        #expect(again.header["resume"] == ["epoch": 77, "sequence": 3], "it resumes from where it was")
        harness.bus("app.a", sequence: 2, topicSequence: 2, epoch: 99)
        #expect(harness.delivered.isEmpty, "live events wait while joining")
        harness.journalEvent("app.a", sequence: 1, topicSequence: 1, epoch: 99)
        #expect(harness.delivered.map(\.0) == [1] && harness.delivered.allSatisfy(\.1))
        harness.journalEvent("app.a", sequence: 2, topicSequence: 2, epoch: 99)
        #expect(harness.delivered.map(\.0) == [2] && harness.delivered.allSatisfy(\.1))
        harness.reply(
            to: again,
            [
                "epoch": 99, "sequence": 2, "replayed": 2,
                "topics": ["app.a": ["sequence": 2, "topicSequence": 2]],
                "gap": [
                    "after": 3, "reason": "the broker restarted without a journal", "epoch": 99,
                    "sequence": 2,
                ],
            ])
        #expect(harness.delivered.isEmpty, "the held copy of #2 is a duplicate")
        harness.bus("app.a", sequence: 3, topicSequence: 3, epoch: 99)
        #expect(harness.delivered.map(\.0) == [3])
        #expect(harness.session.cursor == EventCursor(epoch: 99, sequence: 3))
    }

    @Test("calls with a repeated header are delivered with their own ids and bodies; a bad one is refused")
    func repeatedCallHeaders() throws {
        var harness = ConnectionHarness()
        let header: JSONValue = ["method": "resolve", "service": "svc", "timeoutMs": 5000]
        for index in 0..<3 {
            let frames = ControlRequest(
                .call, requestID: Array("k\(index)".utf8), header: header,
                payload: Array("{\"n\":\(index)}".utf8)
            ).frames()
            harness.step { session, effects, now in session.handleControl(frames, now: now, into: &effects) }
            let delivered = harness.effects.compactMap { effect -> (BrokerRequest, [UInt8])? in
                guard case .deliver(.request(let request, let id)) = effect else { return nil }
                return (request, id)
            }
            let expected = ServiceCall(
                service: "svc", method: "resolve", timeoutMilliseconds: 5000,
                body: Array("{\"n\":\(index)}".utf8))
            #expect(delivered.count == 1)
            #expect(delivered.first?.0 == .call(expected) && delivered.first?.1 == Array("k\(index)".utf8))
        }
        let bad = ControlRequest(.call, requestID: Array("k9".utf8), header: ["method": "resolve"]).frames()
        harness.step { session, effects, now in session.handleControl(bad, now: now, into: &effects) }
        let refusals = harness.effects.compactMap { effect -> ControlReply? in
            guard case .sendControl(let frames) = effect,
                case .reply(let reply)? = try? ControlMessage.decode(frames[...])
            else { return nil }
            return reply
        }
        #expect(refusals.map(\.status) == [.badRequest])
    }

    @Test("bus events that arrive while joining wait for the snapshot; those it covers are dropped")
    func joinBuffersAndDeduplicates() {
        var harness = ConnectionHarness()
        let register = harness.join()
        #expect(register.command == .register)
        harness.bus("app.a", sequence: 5, topicSequence: 2)
        harness.bus("app.a", sequence: 7, topicSequence: 3)
        #expect(harness.delivered.isEmpty, "nothing is delivered before the registration is confirmed")
        harness.reply(
            to: register,
            ["epoch": 77, "sequence": 5, "topics": ["app.a": ["sequence": 5, "topicSequence": 2]]])
        #expect(harness.delivered.map(\.0) == [7], "#5 is part of the snapshot; #7 is live")
        harness.bus("app.a", sequence: 7, topicSequence: 3)
        #expect(harness.delivered.isEmpty, "a duplicate is dropped")
        #expect(harness.session.cursor == EventCursor(epoch: 77, sequence: 7))
    }

    @Test(
        "a skipped topic sequence asks for a replay, holds later events, then delivers everything once, in order"
    )
    func gapRecovery() {
        var harness = ConnectionHarness()
        let register = harness.join()
        harness.reply(to: register, ["epoch": 77, "sequence": 0, "topics": [:]])
        harness.bus("app.a", sequence: 1, topicSequence: 1)
        harness.bus("app.a", sequence: 4, topicSequence: 3)
        let replay = harness.sent.first!
        #expect(replay.command == .replay)
        #expect(replay.header["after"] == 1 && replay.header["events"] == ["app.a"])
        harness.bus("app.b", sequence: 5, topicSequence: 1)
        #expect(harness.delivered.isEmpty, "held while recovering")
        harness.journalEvent("app.a", sequence: 2, topicSequence: 2)
        #expect(harness.delivered.map(\.0) == [2] && harness.delivered.allSatisfy(\.1))
        harness.journalEvent("app.a", sequence: 4, topicSequence: 3)
        #expect(harness.delivered.map(\.0) == [4] && harness.delivered.allSatisfy(\.1))
        harness.reply(to: replay, ["replayed": 2, "sequence": 5, "epoch": 77])
        #expect(harness.delivered.map(\.0) == [5], "#4 came from the journal already; #5 was held")
    }

    @Test(
        "a bus message's events that each come next of their name leave as one run; from a skipped one on, the general path"
    )
    func runs() {
        var harness = ConnectionHarness()
        let register = harness.join()
        harness.reply(to: register, ["epoch": 77, "sequence": 0, "topics": [:]])
        harness.bus("app.a", sequence: 1, topicSequence: 1)
        #expect(
            harness.runs.isEmpty && harness.delivered.map(\.0) == [1], "a name seen first: the general path")
        harness.bus("app.a", events: [(2, 2, nil), (3, 3, nil), (4, 4, nil)])
        #expect(harness.runs == [[2, 3, 4]])
        #expect(harness.delivered.map(\.0) == [2, 3, 4])
        harness.bus("app.a", events: [(5, 5, nil), (7, 7, nil), (8, 8, nil)])
        #expect(harness.runs == [[5]], "the run ends before the gap")
        #expect(harness.delivered.map(\.0) == [5], "#7 and #8 wait for the replay of #6")
        #expect(harness.sent.first?.command == .replay)
        harness.bus("app.a", events: [(9, 9, nil), (10, 10, nil)])
        #expect(
            harness.runs.isEmpty && harness.delivered.isEmpty,
            "the next of their name, but held while recovering")
    }

    @Test(
        "a REPLAY the broker never answers holds live events 30 s at most: then the connection is made again, resuming before them"
    )
    func unansweredReplay() throws {
        var harness = ConnectionHarness()
        let register = harness.join()
        harness.reply(to: register, ["epoch": 77, "sequence": 0, "topics": [:]])
        harness.bus("app.a", sequence: 1, topicSequence: 1)
        harness.bus("app.a", sequence: 4, topicSequence: 3)
        #expect(harness.sent.first?.command == .replay)
        harness.bus("app.b", sequence: 5, topicSequence: 1)
        let heartbeat = ControlRequest(.heartbeat, header: .emptyObject).frames()
        var lost = false
        for _ in 0..<62 where !lost {
            // The broker keeps heartbeating: only the REPLAY goes unanswered.
            harness.step { session, effects, now in session.handleControl(heartbeat, now: now, into: &effects)
            }
            harness.advance(milliseconds: 500)
            lost = harness.effects.contains {
                if case .deliver(.log(let line)) = $0 {
                    line.contains("did not answer REPLAY within 30 s")
                } else {
                    false
                }
            }
        }
        #expect(lost, "given up after 30 s")
        #expect(harness.delivered.isEmpty)
        #expect(harness.session.cursor?.sequence == 1, "a reconnect resumes before the held events")
    }

    @Test("a gap the journal cannot fill is reported and the session continues from the broker's state")
    func unrecoverableGap() {
        var harness = ConnectionHarness()
        let register = harness.join()
        harness.reply(to: register, ["epoch": 77, "sequence": 0, "topics": [:]])
        harness.bus("app.a", sequence: 9, topicSequence: 9)
        let replay = harness.sent.first!
        harness.reply(
            to: replay,
            [
                "gap": ["after": 0, "reason": "the journal no longer holds events 1...8"],
                "topics": ["app.a": ["sequence": 8, "topicSequence": 8]],
            ])
        #expect(
            harness.effects.contains {
                if case .deliver(.gap(let notice)) = $0 { notice.reason.contains("1...8") } else { false }
            })
        #expect(harness.delivered.map(\.0) == [9])
    }

    @Test("a restarted service resumes from its cursor: replayed events first, then live ones")
    func resumeAfterRestart() {
        var harness = ConnectionHarness(resume: EventCursor(epoch: 77, sequence: 10))
        let register = harness.join()
        #expect(register.header["resume"] == ["epoch": 77, "sequence": 10])
        harness.bus("app.a", sequence: 13, topicSequence: 13)
        harness.journalEvent("app.a", sequence: 11, topicSequence: 11)
        harness.journalEvent("app.a", sequence: 12, topicSequence: 12)
        harness.reply(
            to: register,
            [
                "epoch": 77, "sequence": 12, "replayed": 2,
                "topics": ["app.a": ["sequence": 12, "topicSequence": 12]],
            ])
        #expect(harness.delivered.map(\.0) == [13])
    }

    @Test(
        "handlers full while resuming: nothing more is delivered, the snapshot does not pass what they refused, and room asks the journal for it"
    )
    func handlersFullWhileResuming() {
        var harness = ConnectionHarness(resume: EventCursor(epoch: 77, sequence: 10))
        let register = harness.join()
        harness.journalEvent("app.a", sequence: 11, topicSequence: 11)
        harness.journalEvent("app.b", sequence: 12, topicSequence: 1)
        harness.journalEvent("app.a", sequence: 13, topicSequence: 12)
        #expect(harness.delivered.map(\.0) == [13])
        // The handlers had no room for #13 (told later, as the socket thread reads its mailbox).
        harness.journalEvent("app.a", sequence: 14, topicSequence: 13)
        harness.step { session, effects, _ in
            session.handlersRefused("app.a", sequence: 13, topicSequence: 12, into: &effects)
        }
        harness.journalEvent("app.a", sequence: 15, topicSequence: 14)
        #expect(harness.delivered.isEmpty, "nothing is delivered while the handlers are full")
        // Room while still joining: the connection stays paused until it is registered.
        harness.step { session, effects, _ in session.handlersHaveRoom(into: &effects) }
        #expect(harness.sent.isEmpty)
        harness.bus("app.a", sequence: 16, topicSequence: 15)
        harness.reply(
            to: register,
            [
                "epoch": 77, "sequence": 15, "replayed": 5,
                "topics": [
                    "app.a": ["sequence": 15, "topicSequence": 14],
                    "app.b": ["sequence": 12, "topicSequence": 1],
                ],
            ])
        #expect(harness.delivered.isEmpty, "the snapshot does not pass what the handlers refused")
        #expect(
            harness.session.cursor == EventCursor(epoch: 77, sequence: 12), "a reconnect resumes before #13")
        let replay = harness.sent.first { $0.command == .replay }!
        #expect(replay.header["after"] == 12 && replay.header["events"] == ["app.a"])
        harness.bus("app.a", sequence: 17, topicSequence: 16)
        #expect(harness.delivered.isEmpty, "live events wait for the replay")
        for (sequence, topicSequence) in [(13, 12), (14, 13), (15, 14), (16, 15)] as [(UInt64, UInt64)] {
            harness.journalEvent("app.a", sequence: sequence, topicSequence: topicSequence)
            #expect(harness.delivered.map(\.0) == [sequence])
        }
        harness.reply(to: replay, ["replayed": 4, "sequence": 17, "epoch": 77])
        #expect(harness.delivered.map(\.0) == [17], "then the live one held meanwhile, once")
    }

    @Test(
        "the handlers full again during the REPLAY they asked for: what the first REPLAY still sends after the second is asked is held, and each event is delivered once, in order"
    )
    func handlersFullAgainDuringTheirReplay() {
        var harness = ConnectionHarness()
        let register = harness.join()
        harness.reply(to: register, ["epoch": 77, "sequence": 0, "topics": [:]])
        var delivered: [UInt64] = []
        harness.bus("app.a", sequence: 1, topicSequence: 1)
        delivered += harness.delivered.map(\.0)
        harness.bus("app.a", sequence: 2, topicSequence: 2)
        delivered += harness.delivered.map(\.0)
        // #2 did not fit.
        harness.step { session, effects, _ in
            session.handlersRefused("app.a", sequence: 2, topicSequence: 2, into: &effects)
        }
        harness.step { session, effects, _ in session.handlersHaveRoom(into: &effects) }
        let first = harness.sent.first { $0.command == .replay }!
        #expect(first.header["after"] == 1)
        harness.journalEvent("app.a", sequence: 2, topicSequence: 2)
        delivered += harness.delivered.map(\.0)
        harness.journalEvent("app.a", sequence: 3, topicSequence: 3)
        delivered += harness.delivered.map(\.0)
        // #3 did not fit either; #4 of the first REPLAY comes while the handlers are full.
        harness.step { session, effects, _ in
            session.handlersRefused("app.a", sequence: 3, topicSequence: 3, into: &effects)
        }
        harness.journalEvent("app.a", sequence: 4, topicSequence: 4)
        harness.step { session, effects, _ in session.handlersHaveRoom(into: &effects) }
        let second = harness.sent.first { $0.command == .replay }!
        #expect(second.header["after"] == 2)
        // The first REPLAY goes on: #5 is not the next of its name now.
        harness.journalEvent("app.a", sequence: 5, topicSequence: 5)
        #expect(harness.delivered.isEmpty && harness.sent.isEmpty, "held; the second REPLAY will send it")
        harness.reply(to: first, ["replayed": 4, "sequence": 5, "epoch": 77])
        #expect(harness.delivered.isEmpty, "the second REPLAY is still out")
        for (sequence, topicSequence) in [(3, 3), (4, 4), (5, 5)] as [(UInt64, UInt64)] {
            harness.journalEvent("app.a", sequence: sequence, topicSequence: topicSequence)
            delivered += harness.delivered.map(\.0)
        }
        harness.reply(to: second, ["replayed": 3, "sequence": 5, "epoch": 77])
        delivered += harness.delivered.map(\.0)
        #expect(
            delivered == [1, 2, 2, 3, 3, 4, 5],
            "#2 and #3 went to the handlers, were refused and came again; every other once, in order")
        #expect(harness.session.cursor == EventCursor(epoch: 77, sequence: 5))
    }

    @Test(
        "a reconnect while a REPLAY delivers later events than a live one held meanwhile resumes before the held one"
    )
    func reconnectDuringReplayKeepsHeldEvents() {
        var harness = ConnectionHarness()
        let register = harness.join()
        harness.reply(to: register, ["epoch": 77, "sequence": 0, "topics": [:]])
        harness.bus("app.a", sequence: 1, topicSequence: 1)
        harness.bus("app.a", sequence: 4, topicSequence: 3)
        #expect(harness.sent.first?.command == .replay)
        // app.b #3 was published before the replay was answered and arrives meanwhile: held.
        harness.bus("app.b", sequence: 3, topicSequence: 1)
        harness.journalEvent("app.a", sequence: 2, topicSequence: 2)
        harness.journalEvent("app.a", sequence: 4, topicSequence: 3)
        #expect(harness.session.cursor == EventCursor(epoch: 77, sequence: 2), "before the held #3")
    }

    @Test("a silent broker is abandoned after interval × liveness and retried with doubling backoff, capped")
    func brokerSilenceAndBackoff() {
        var harness = ConnectionHarness()
        let register = harness.join()
        harness.reply(
            to: register, ["epoch": 77, "sequence": 0, "heartbeat": ["intervalMs": 1000, "liveness": 3]])
        harness.advance(milliseconds: 1000)
        #expect(harness.sent.map(\.command) == [.heartbeat])
        harness.advance(milliseconds: 1000)
        harness.advance(milliseconds: 1001)
        #expect(
            harness.effects.contains(
                .deliver(.log("the broker was silent for 3000 ms; reconnecting in 250 ms"))))
        harness.advance(milliseconds: 250)
        #expect(harness.effects.first == .openControl)
        var waits: [String] = []
        for _ in 0..<5 {
            harness.advance(milliseconds: 3000)
            for case .deliver(.log(let line)) in harness.effects { waits.append(line) }
            harness.advance(milliseconds: 1500)
            #expect(harness.effects.first == .openControl)
        }
        let prefix = "the broker at tcp://127.0.0.1:1 did not answer HELLO; reconnecting in "
        #expect(waits == ["500 ms", "1000 ms", "1500 ms", "1500 ms", "1500 ms"].map { prefix + $0 })
    }

    @Test("a service's requests made while it joins leave once it is registered, after the REGISTER")
    func requestsWaitForTheRegistration() throws {
        var harness = ConnectionHarness()
        let register = harness.join()
        let request = ClientRequest.apps(.popToRoot, operationID: "o1")
        harness.step { session, effects, now in
            session.submit(request, ticket: 9, timeoutMilliseconds: 5000, now: now, into: &effects)
        }
        #expect(harness.sent.isEmpty, "held while the registration is not confirmed")
        harness.reply(to: register, ["epoch": 77, "sequence": 0])
        #expect(harness.sent.map(\.command) == [.apps])
        #expect(harness.sent.first?.header["opId"] == "o1")
    }

    @Test("a cancelled request is forgotten: one held until the registration is never sent")
    func cancelledRequestsAreForgotten() throws {
        var harness = ConnectionHarness()
        let register = harness.join()
        for (ticket, operation) in ["o1", "o2"].enumerated() {
            let request = ClientRequest.apps(.popToRoot, operationID: operation)
            harness.step { session, effects, now in
                session.submit(
                    request, ticket: UInt64(ticket), timeoutMilliseconds: 5000, now: now, into: &effects)
            }
        }
        harness.step { session, _, _ in session.cancel(ticket: 0) }
        harness.reply(to: register, ["epoch": 77, "sequence": 0])
        #expect(harness.sent.map { $0.header["opId"] } == ["o2"])
        harness.advance(milliseconds: 6000)
        let failed = harness.effects.compactMap { effect -> UInt64? in
            if case .deliver(.completion(let ticket, .failure)) = effect { return ticket }
            return nil
        }
        #expect(failed == [1], "the cancelled one is not even timed out")
    }

    @Test(
        "a stack change with an id outlives a lost broker: sent again, in order, once the service is registered again"
    )
    func repeatableRequestsOutliveTheBroker() throws {
        var harness = ConnectionHarness()
        let register = harness.join()
        harness.reply(
            to: register, ["epoch": 77, "sequence": 0, "heartbeat": ["intervalMs": 1000, "liveness": 3]])
        let finish = ClientRequest.apps(
            .exit(AppExit(target: .session("s2"), force: true)), operationID: "c1.1")
        let lookup = ClientRequest.lookup(name: "gateway")
        let push = ClientRequest.apps(.start(AppStart(app: "home")), operationID: "c2.1")
        for (ticket, request) in [finish, lookup, push].enumerated() {
            harness.step { session, effects, now in
                session.submit(
                    request, ticket: UInt64(ticket), timeoutMilliseconds: 60_000, now: now,
                    into: &effects)
            }
        }
        harness.advance(milliseconds: 3001)
        let failed = harness.effects.compactMap { effect -> UInt64? in
            if case .deliver(.completion(let ticket, .failure)) = effect { return ticket }
            return nil
        }
        #expect(failed == [1], "only the lookup fails: the changes wait")
        let late = ClientRequest.apps(.popToRoot, operationID: "c3.1")
        harness.step { session, effects, now in
            session.submit(late, ticket: 3, timeoutMilliseconds: 60_000, now: now, into: &effects)
        }
        #expect(harness.effects.isEmpty, "made while disconnected: held, not refused")
        harness.advance(milliseconds: 300)
        let again = harness.sent.first { $0.command == .hello }
        harness.reply(to: try #require(again), ["bus": "tcp://127.0.0.1:2", "epoch": 78])
        let rejoin = try #require(harness.sent.first)
        #expect(rejoin.command == .register)
        harness.reply(to: rejoin, ["epoch": 78, "sequence": 0])
        #expect(harness.sent.map { $0.header["opId"] } == ["c1.1", "c2.1", "c3.1"])
    }

    @Test("heartbeats carry the number of events the handlers' queue dropped, when there were any")
    func heartbeatsReportDrops() {
        var harness = ConnectionHarness(dropped: 7)
        let register = harness.join()
        harness.reply(
            to: register, ["epoch": 77, "sequence": 0, "heartbeat": ["intervalMs": 1000, "liveness": 3]])
        harness.advance(milliseconds: 1000)
        #expect(harness.sent.map(\.command) == [.heartbeat])
        #expect(harness.sent.first?.header == ["dropped": 7, "name": "svc"])
    }

    @Test(
        "a service that did not run does not count that time as the broker's silence: the broker gets a whole window from then"
    )
    func ownAbsence() {
        var harness = ConnectionHarness()
        let register = harness.join()
        harness.reply(
            to: register, ["epoch": 77, "sequence": 0, "heartbeat": ["intervalMs": 1000, "liveness": 3]])
        harness.advance(milliseconds: 1000)
        harness.advance(milliseconds: 5000)  // stopped: the broker's heartbeats wait unread
        #expect(
            harness.effects.contains(
                .deliver(
                    .log(
                        "this service did not run for 4000 ms (stopped or starved): that time is not counted as the broker's silence"
                    ))))
        #expect(harness.sent.map(\.command) == [.heartbeat], "still connected, and beating")
        for _ in 0..<2 { harness.advance(milliseconds: 1000) }
        #expect(!harness.effects.contains(.openControl))
        harness.advance(milliseconds: 1001)
        #expect(
            harness.effects.contains(
                .deliver(.log("the broker was silent for 3000 ms; reconnecting in 250 ms"))))
        // Once between two signs of life: a broker still silent after a second absence is left.
        var again = ConnectionHarness()
        let request = again.join()
        again.reply(
            to: request, ["epoch": 77, "sequence": 0, "heartbeat": ["intervalMs": 1000, "liveness": 3]])
        again.advance(milliseconds: 1000)
        again.advance(milliseconds: 5000)
        again.advance(milliseconds: 5000)
        #expect(
            again.effects.contains(
                .deliver(.log("the broker was silent for 3000 ms; reconnecting in 250 ms"))))
    }

    @Test("each backoff wait is scaled by the jitter, at most 1.2 times: back within 2 s of the broker")
    func backoffJitter() {
        var harness = ConnectionHarness(jitter: 5)
        let register = harness.join()
        harness.reply(
            to: register, ["epoch": 77, "sequence": 0, "heartbeat": ["intervalMs": 1000, "liveness": 3]])
        harness.advance(milliseconds: 3001)
        #expect(
            harness.effects.contains(
                .deliver(.log("the broker was silent for 3000 ms; reconnecting in 300 ms"))))
    }

    @Test("a taken name is retried once after the holder's expiry, then refused for good")
    func conflictRetry() {
        var harness = ConnectionHarness()
        let first = harness.join()
        harness.reply(
            to: first, status: .conflict,
            ["error": "service 'svc' is already registered", "retryAfterMs": 400])
        #expect(!harness.effects.contains { if case .deliver(.refused) = $0 { true } else { false } })
        harness.advance(milliseconds: 600)
        #expect(harness.effects.first == .openControl)
        let hello = harness.sent.first!
        harness.reply(to: hello, ["bus": "tcp://127.0.0.1:2", "epoch": 77])
        let second = harness.sent.first!
        harness.reply(
            to: second, status: .conflict,
            ["error": "service 'svc' is already registered", "retryAfterMs": 400])
        #expect(harness.effects.contains { if case .deliver(.refused) = $0 { true } else { false } })
    }

    @Test(
        "a plain client whose broker refuses the connection fails its requests 0.8 s after it started, then at once; once a broker is reached it waits through outages again"
    )
    func noBroker() throws {
        var harness = ConnectionHarness()
        harness.session = BrokerConnection(
            configuration: ConnectionConfiguration(brokerEndpoint: "tcp://127.0.0.1:1", token: "c1"))
        harness.step { session, effects, now in session.start(now: now, into: &effects) }
        let request = ClientRequest.lookup(name: "url")
        harness.step { session, effects, now in
            session.submit(request, ticket: 1, timeoutMilliseconds: 5000, now: now, into: &effects)
        }
        #expect(harness.sent.count == 1, "sent at once: a broker may be there")
        harness.now += 10_000_000
        harness.step { session, effects, now in session.controlLink(.refused, now: now, into: &effects) }
        harness.advance(milliseconds: 500)
        #expect(harness.effects.isEmpty, "not before 0.8 s from the start")
        #expect(harness.session.nextDeadline == 1_800_000_000)
        harness.advance(milliseconds: 290)
        guard case .deliver(.completion(1, .failure(let error))) = harness.effects.first else {
            Issue.record("no failure: \(harness.effects)")
            return
        }
        #expect(error.status == .unavailable)
        #expect(
            error.message
                == "no broker answered at tcp://127.0.0.1:1: the connection is refused; start one with `lifeline up`"
        )
        #expect(
            harness.effects.last == .reopenControlDiscardingQueue, "what the old socket queued is dropped")
        harness.step { session, effects, now in
            session.submit(request, ticket: 2, timeoutMilliseconds: 5000, now: now, into: &effects)
        }
        guard case .deliver(.completion(2, .failure)) = harness.effects.first else {
            Issue.record("a later request waited: \(harness.effects)")
            return
        }
        harness.step { session, effects, now in session.controlLink(.connected, now: now, into: &effects) }
        harness.step { session, effects, now in
            session.submit(request, ticket: 3, timeoutMilliseconds: 5000, now: now, into: &effects)
        }
        #expect(harness.sent.count == 1, "a broker is there now")
        harness.step { session, effects, now in session.controlLink(.refused, now: now, into: &effects) }
        harness.advance(milliseconds: 2000)
        #expect(harness.effects.isEmpty, "a broker reached once is waited for (a restart)")
    }

    @Test(
        "a group's client whose CALL goes unanswered asks HELLO: answered, it stays; unanswered for 1 s, it tries the next member"
    )
    func unansweredCallProbesTheLeader() throws {
        var harness = ConnectionHarness()
        harness.session = BrokerConnection(
            configuration: ConnectionConfiguration(
                brokerEndpoint: "tcp://127.0.0.1:1,tcp://127.0.0.1:2", token: "c1"))
        harness.step { session, effects, now in session.start(now: now, into: &effects) }
        let call = ClientRequest.call(ServiceCall(service: "cart", method: "add", key: "ana"))
        harness.step { session, effects, now in
            session.submit(call, ticket: 1, timeoutMilliseconds: 500, now: now, into: &effects)
        }
        #expect(harness.sent.first?.header["key"] == "ana")
        harness.advance(milliseconds: 600)
        let probe = try #require(harness.sent.first, "the CALL's timeout sends HELLO")
        #expect(probe.command == .hello)
        #expect(
            harness.effects.contains {
                if case .deliver(.completion(1, .failure)) = $0 { true } else { false }
            })
        harness.reply(to: probe, ["bus": "tcp://127.0.0.1:9", "epoch": 1])
        harness.advance(milliseconds: 2000)
        #expect(harness.session.currentEndpoint == "tcp://127.0.0.1:1", "the leader answered: a slow service")

        harness.step { session, effects, now in
            session.submit(call, ticket: 2, timeoutMilliseconds: 500, now: now, into: &effects)
        }
        harness.advance(milliseconds: 600)
        #expect(harness.sent.first?.command == .hello)
        harness.advance(milliseconds: 1100)
        #expect(harness.session.currentEndpoint == "tcp://127.0.0.1:2", "no answer to HELLO: the next member")
    }

    @Test("a service, a subscriber and a group's client never take the no-broker shortcut")
    func noBrokerRuleIsForPlainClients() {
        var service = ConnectionHarness()
        service.step { session, effects, now in session.start(now: now, into: &effects) }
        service.step { session, effects, now in session.controlLink(.refused, now: now, into: &effects) }
        #expect(service.session.noBrokerAt == nil)
        let group = BrokerConnection(
            configuration: ConnectionConfiguration(
                brokerEndpoint: "tcp://127.0.0.1:1,tcp://127.0.0.1:2", token: "c1"))
        var copy = group
        var effects: [ConnectionEffect] = []
        copy.controlLink(.refused, now: 1, into: &effects)
        #expect(copy.noBrokerAt == nil, "one member refused: the next one is tried")
    }
}
