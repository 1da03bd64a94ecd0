import LifelineProtocol
import Synchronization
import Testing

@testable import Lifeline

@Suite(
    "Inline handlers run as their event arrives, and bus order still holds",
    .timeLimit(.minutes(1)))
struct ImmediateDeliveryTests {
    private func message(_ name: EventName, _ sequence: UInt64, flags: UInt64 = 0) -> BusMessage {
        let header = BusHeader(
            epoch: 7, sequence: sequence, topicSequence: sequence, flags: flags, publishedWallNanoseconds: 0,
            publishedMonotonicNanoseconds: 0)
        return BusMessage(name: name, header: header, payload: Array(#"{"n":1}"#.utf8))
    }

    @Test(
        "an immediate handler runs inside the delivery only when its consumer waits with nothing queued and no drop untold (with a few handlers, compared by name, and with more, looked up)",
        arguments: [0, 3])
    func runsOnlyWhenNothingIsAhead(extraHandlers: Int) async throws {
        struct Refused: Error {}
        struct Needs: Decodable { let missing: Int }
        let journal = Journal()
        var service = Service("svc")
            .onInline("app.now") { event in
                journal.add("now #\(event.sequence) n=\(event["n"]?.intValue ?? 0)")
            }
            .onInline("app.fails") { _ in throw Refused() }
            .onInline("app.typed") { event in _ = try event.decode(Needs.self) }
            .on("app.later") { _ in await Task.yield() }
        for index in 0..<extraHandlers {
            service = service.onInline(EventName(rawValue: "app.extra\(index)")) { _ in journal.add("extra") }
        }
        let rig = DeliveryRig(service)
        let (immediate, inbound, drops, handled, connection) = (
            rig.immediate, rig.inbound, rig.drops, rig.handled, rig.connection
        )
        let responder = rig.responder

        #expect(
            !immediate.deliver(message("app.now", 1), receivedAt: 0, replayed: false),
            "before the service's context is attached every event is queued")
        immediate.attach(responder)
        #expect(
            !immediate.deliver(message("app.now", 2), receivedAt: 0, replayed: false),
            "no consumer is waiting yet")

        let consumer = Task { await inbound.next() }
        while !inbound.consumerIsWaiting { await Task.yield() }
        #expect(immediate.deliver(message("app.now", 3), receivedAt: 0, replayed: false))
        #expect(journal.all == ["now #3 n=1"], "the handler ran before deliver returned")
        #expect(handled.snapshot == ["app.now": 1])
        #expect(
            !immediate.deliver(message("app.later", 4), receivedAt: 0, replayed: false),
            "a handler that awaits goes through the queue")
        #expect(immediate.deliver(message("app.fails", 5, flags: 1), receivedAt: 0, replayed: false))
        guard case .acknowledge(let sequence, let epoch, let error) = await connection.nextCommand() else {
            Issue.record("an acknowledged event whose handler threw is acknowledged with the error")
            return
        }
        #expect(sequence == 5 && epoch == 7 && error == "Refused()")
        #expect(
            handled.failed == 1 && handled.snapshot["app.fails"] == 1,
            "a handler that threw is counted as handled and as failed")
        #expect(immediate.deliver(message("app.typed", 5), receivedAt: 0, replayed: false))
        #expect(
            handled.snapshot["app.typed"] == nil && handled.undecodable == 1,
            "a payload that did not decode is counted as the handlers' loop counts it: undecodable, not handled"
        )

        drops.record(message("app.now", 6))
        #expect(
            !immediate.deliver(message("app.now", 7), receivedAt: 0, replayed: false),
            "with a drop not yet told to the handlers the event waits behind the notice")
        _ = drops.takeNotice(limit: 1)
        inbound.push(.gap(GapNotice(after: 0, reason: "test", epoch: 7, sequence: 0)))
        _ = await consumer.value
        #expect(
            !immediate.deliver(message("app.now", 8), receivedAt: 0, replayed: false),
            "the consumer is not waiting any more")
        #expect(journal.all == ["now #3 n=1"])
    }

    @Test(
        "a run of a bus message's events handled inline does what delivering them one by one does: the same handler calls, counts, undecodable payloads and acknowledgements, in order"
    )
    func runMatchesOneByOne() async throws {
        struct Refused: Error {}
        struct Needs: Decodable { let n: Int }
        let payloads = [#"{"n":1}"#, #"{"n":2}"#, #"{}"#, #"{"n":4}"#, #"{"n":"five"}"#, #"{"n":6}"#]
        let run = payloads.enumerated().map { index, text in
            let sequence = UInt64(index + 1)
            let header = BusHeader(
                epoch: 7, sequence: sequence, topicSequence: sequence, flags: index % 2 == 1 ? 1 : 0,
                publishedWallNanoseconds: 0, publishedMonotonicNanoseconds: 0)
            return BusMessage(name: "app.now", header: header, payload: Array(text.utf8))
        }
        var outcomes: [([String], [String: UInt64], UInt64, [String])] = []
        for asRun in [true, false] {
            let journal = Journal()
            let service = Service("svc").onInline("app.now") { event in
                let value = try event.decode(Needs.self)
                journal.add("#\(event.sequence) n=\(value.n)")
                if value.n == 4 { throw Refused() }
            }
            let rig = DeliveryRig(service)
            let (immediate, inbound, handled, connection) = (
                rig.immediate, rig.inbound, rig.handled, rig.connection
            )
            immediate.attach(rig.responder)
            #expect(immediate.deliver(run: run[...], receivedAt: 1) == 0, "no consumer waits: nothing runs")
            let consumer = Task { await inbound.next() }
            while !inbound.consumerIsWaiting { await Task.yield() }
            if asRun {
                #expect(immediate.deliver(run: run[...], receivedAt: 1) == run.count)
            } else {
                for message in run { #expect(immediate.deliver(message, receivedAt: 1, replayed: false)) }
            }
            var acknowledgements: [String] = []
            for _ in 0..<3 {
                guard case .acknowledge(let sequence, _, let error) = await connection.nextCommand() else {
                    Issue.record("each event with flag bit 0 is acknowledged")
                    break
                }
                acknowledgements.append("#\(sequence) \(error ?? "ok")")
            }
            outcomes.append((journal.all, handled.snapshot, handled.undecodable, acknowledgements))
            inbound.push(.gap(GapNotice(after: 0, reason: "test", epoch: 7, sequence: 0)))
            _ = await consumer.value
        }
        #expect(outcomes[0].0 == ["#1 n=1", "#2 n=2", "#4 n=4", "#6 n=6"])
        #expect(outcomes[0].0 == outcomes[1].0 && outcomes[0].1 == outcomes[1].1)
        #expect(outcomes[0].2 == 2 && outcomes[0].2 == outcomes[1].2, "{} and n=\"five\" did not decode")
        #expect(outcomes[0].3 == outcomes[1].3)
        #expect(outcomes[0].3.first == "#2 ok" && outcomes[0].3.last == "#6 ok")
    }

    @Test("behind a handler that is suspended, inline handlers wait their turn: bus order end to end")
    func orderBehindASuspendedHandler() async throws {
        let journal = Journal()
        let gate = Gate()
        let service = Service("svc")
            .on("app.slow") { event in
                await gate.wait()
                journal.add("slow #\(event.sequence)")
            }
            .onInline("app.fast") { event in journal.add("fast #\(event.sequence)") }
        let host = await HostHarness(service)
        host.event("app.fast", sequence: 1, flags: 1)
        guard case .acknowledge(1, _, nil) = await host.connection.nextCommand() else {
            Issue.record("the first event is acknowledged")
            return
        }
        host.event("app.slow", sequence: 2)
        await gate.entered()
        host.event("app.fast", sequence: 3)
        host.event("app.fast", sequence: 4)
        #expect(journal.all == ["fast #1"], "nothing overtakes the suspended handler")
        gate.open()
        host.event("app.fast", sequence: 5, flags: 1)
        guard case .acknowledge(5, _, nil) = await host.connection.nextCommand() else {
            Issue.record("the last event is acknowledged")
            return
        }
        #expect(journal.all == ["fast #1", "slow #2", "fast #3", "fast #4", "fast #5"])
        try await host.stop()
    }

    @Test("an inline method answers at once, also while another call is suspended")
    func immediateCalls() async throws {
        struct Broken: Error {}
        let gate = Gate()
        let service = Service("svc")
            .method("slow") { _ in
                await gate.wait()
                return "slow"
            }
            .methodInline("fast") { call in ["echo": call.body] }
            .methodInline("broken") { _ in throw Broken() }
            .methodInline("refused") { _ in throw ServiceError(.conflict, "not now") }
        let host = await HostHarness(service)
        host.connection.deliver(
            .request(.call(ServiceCall(service: "svc", method: "slow")), id: Array("s".utf8)))
        await gate.entered()
        let fast = await host.ask(
            .call(ServiceCall(service: "svc", method: "fast", body: Array("[2]".utf8))), id: "f")
        #expect(try fast.json() == ["echo": [2]])
        let broken = await host.ask(.call(ServiceCall(service: "svc", method: "broken")), id: "b")
        #expect(broken.status == .internalError && broken.errorMessage == "svc.broken failed: Broken()")
        let refused = await host.ask(.call(ServiceCall(service: "svc", method: "refused")), id: "r")
        #expect(refused.status == .conflict && refused.errorMessage == "not now")
        gate.open()
        let slow = await host.connection.nextAnswer()
        #expect(slow.requestID == Array("s".utf8))
        #expect(try slow.json() == "slow", "the suspended call is answered once it goes on")
        try await host.stop()
    }
}

/// An ``ImmediateDelivery`` for a service, and the responder (over an in-memory connection) it is
/// attached to when a test says so.
private struct DeliveryRig {
    let inbound = InboundQueue<ConnectionEvent>()
    let drops = DropCounter()
    let handled: HandlerCounts
    let immediate: ImmediateDelivery
    let connection = InMemoryConnection()
    let responder: ServiceResponder

    init(_ service: Service) {
        handled = HandlerCounts(events: service.events)
        immediate = ImmediateDelivery(service: service, handled: handled, drops: drops, inbound: inbound)
        let connection = connection
        let client = LifelineClient(brokerEndpoint: "inproc://none", deliver: { _ in }) { pending, sink in
            connection.attach(pending, sink)
            return connection
        }
        let context = ServiceContext(serviceName: "svc", client: client)
        let runtime = RuntimeServices(
            mainName: "svc",
            template: ServiceRegistration(
                name: "svc", instance: "i", pid: 1, host: "h", events: [], methods: [], attachToken: "i"))
        responder = ServiceResponder(
            service: service, name: "svc", client: client, context: context, runtime: runtime, drops: drops,
            handled: handled, sessions: HostedSessions(factories: [:], actions: [:], context: context))
    }
}
