import LifelineProtocol
import Synchronization
import Testing

@testable import Lifeline

/// Runs a ``Service`` over an ``InMemoryConnection``: the test plays the broker, handing the host
/// requests and events and reading its answers in the order it sent them.
struct HostHarness {
    let connection = InMemoryConnection()
    let runner: ServiceRunner
    let running: Task<Void, any Error>

    init(_ service: Service) async {
        let connection = self.connection
        runner = ServiceRunner(service, options: ServiceRunner.Options()) { _, pending, sink in
            connection.attach(pending, sink)
            return connection
        }
        let runner = self.runner
        running = Task { try await runner.run() }
        await connection.attached()
        connection.deliver(.joined(epoch: 7, first: true, sequence: 0, lifecycle: "active"))
    }

    /// Sends `request` as the broker would and returns the host's answer.
    func ask(_ request: BrokerRequest, id: String = "q1") async -> ControlReply {
        connection.deliver(.request(request, id: Array(id.utf8)))
        let reply = await connection.nextAnswer()
        #expect(reply.requestID == Array(id.utf8), "the answer carries the request's id")
        return reply
    }

    func event(_ name: EventName, sequence: UInt64, flags: UInt64 = 0, _ payload: JSONValue = [:]) {
        let header = BusHeader(
            epoch: 7, sequence: sequence, topicSequence: sequence, flags: flags, publishedWallNanoseconds: 0,
            publishedMonotonicNanoseconds: 0)
        connection.deliver(
            .event(
                BusMessage(name: name, header: header, payload: JSONWriter.encode(payload)), receivedAt: 0,
                replayed: false))
    }

    /// Stops the service and waits for ``ServiceRunner/run()`` to return.
    func stop() async throws {
        runner.stop()
        try await running.value
    }
}

/// What handlers saw, in order.
final class Journal: Sendable {
    private let lines = Mutex<[String]>([])
    func add(_ line: String) { lines.withLock { $0.append(line) } }
    var all: [String] { lines.withLock { $0 } }
}

@Suite("Service host without sockets: every broker request answered, in order", .timeLimit(.minutes(1)))
struct ServiceHostTests {
    @Test("CALL: the method's answer, its own error status, unknown methods and bad bodies")
    func calls() async throws {
        let service = Service("svc")
            .method("echo") { call in
                ["got": call.body, "timeout": .int(Int64(call.timeout.wholeMilliseconds))]
            }
            .method("missing") { _ in throw ServiceError(.notFound, "no such thing", details: ["id": 4]) }
        let host = await HostHarness(service)
        let echo = await host.ask(
            .call(
                ServiceCall(service: "svc", method: "echo", timeoutMilliseconds: 900, body: Array("[1]".utf8))
            ))
        #expect(echo.status == .ok)
        #expect(try echo.json() == ["got": [1], "timeout": 900])
        let missing = await host.ask(.call(ServiceCall(service: "svc", method: "missing")), id: "q2")
        #expect(missing.status == .notFound)
        #expect(try missing.json() == ["error": "no such thing", "id": 4])
        let unknown = await host.ask(.call(ServiceCall(service: "svc", method: "nope")), id: "q3")
        #expect(unknown.status == .notFound && unknown.errorMessage == "service 'svc' has no method 'nope'")
        let bad = await host.ask(
            .call(ServiceCall(service: "svc", method: "echo", body: Array("{x".utf8))), id: "q4")
        #expect(bad.status == .badRequest && bad.errorMessage.hasPrefix("the body of svc.echo is not JSON"))
        let other = await host.ask(.call(ServiceCall(service: "elsewhere", method: "echo")), id: "q5")
        #expect(
            other.status == .notFound && other.errorMessage == "this process serves no service 'elsewhere'")
        try await host.stop()
    }

    @Test("OFFER is handled in bus order with the events, and answered with the handler's verdict")
    func offersInOrder() async throws {
        let journal = Journal()
        let service = Service("svc")
            .on("app.tick") { event in journal.add("tick #\(event.sequence)") }
            .handle(.openURL) { event in
                journal.add("offer \(event["url"]?.stringValue ?? "")")
                return Answer(.returnYES, payload: ["url": "app://rewritten"])
            }
            .on("app.acked") { _ in journal.add("acked") }
        let host = await HostHarness(service)
        host.event("app.tick", sequence: 1)
        let offer = DispatchOffer(
            event: .openURL, dispatch: 3, step: 0, timeoutMilliseconds: 500, mode: .chain, completion: nil,
            payload: ["url": "app://x"])
        let answer = await host.ask(.offer(offer), id: "o1")
        host.event("app.tick", sequence: 2)
        host.event("app.acked", sequence: 3, flags: 1)
        guard case .acknowledge(let sequence, let epoch, let error) = await host.connection.nextCommand()
        else {
            Issue.record("an acknowledged event is acknowledged after its handler ran")
            return
        }
        #expect(sequence == 3 && epoch == 7 && error == nil)
        #expect(try answer.json() == ["result": "returnYES", "payload": ["url": "app://rewritten"]])
        #expect(journal.all == ["tick #1", "offer app://x", "tick #2", "acked"])
        let unhandled = await host.ask(
            .offer(
                DispatchOffer(
                    event: .performFetch, dispatch: 4, step: 0, timeoutMilliseconds: 500, mode: .concurrent,
                    completion: .fetchResult, payload: [:])), id: "o2")
        #expect(try unhandled.json() == ["result": "continue"], "an event without a handler continues")
        try await host.stop()
    }

    @Test("START runs the start hook once per request and reports a failing one")
    func starts() async throws {
        let journal = Journal()
        let good = await HostHarness(Service("svc").start { _ in journal.add("started") })
        let reply = await good.ask(.start(name: "svc"))
        #expect(reply.status == .ok)
        #expect(try reply.json() == ["started": true])
        #expect(journal.all == ["started"])
        try await good.stop()

        struct Broken: Error {}
        let bad = await HostHarness(Service("svc").start { _ in throw Broken() })
        let failed = await bad.ask(.start(name: "svc"))
        #expect(failed.status == .internalError && failed.errorMessage.hasPrefix("svc failed to start"))
        try await bad.stop()
    }

    @Test("BOOT runs the task, skips it when its condition is false, runs the start hook for kind start")
    func bootTasks() async throws {
        let journal = Journal()
        let service = Service("svc")
            .bootTask("warm") { boot in journal.add("warm \(boot.launchOptions["url"]?.stringValue ?? "-")") }
            .bootTask("gated", when: .environment("LIFELINE_TEST_UNSET_VARIABLE", equals: nil)) { _ in
                journal.add("gated ran")
            }
            .start { _ in journal.add("start hook") }
        let host = await HostHarness(service)
        let done = await host.ask(
            .boot(
                BootTaskRun(task: "svc.warm", kind: .task, condition: nil, launchOptions: ["url": "app://a"]))
        )
        #expect(try done.json() == ["outcome": "done"])
        let skipped = await host.ask(
            .boot(
                BootTaskRun(
                    task: "svc.gated", kind: .task,
                    condition: .environment("LIFELINE_TEST_UNSET_VARIABLE", equals: nil),
                    launchOptions: [:])), id: "q2")
        #expect(
            try skipped.json()
                == [
                    "outcome": "skipped",
                    "reason": "condition: environment LIFELINE_TEST_UNSET_VARIABLE is not set",
                ])
        let start = await host.ask(
            .boot(BootTaskRun(task: "svc.start", kind: .start, condition: nil, launchOptions: [:])), id: "q3")
        #expect(try start.json() == ["outcome": "done"])
        let unknown = await host.ask(
            .boot(BootTaskRun(task: "svc.nope", kind: .task, condition: nil, launchOptions: [:])), id: "q4")
        #expect(unknown.status == .notFound && unknown.errorMessage == "svc has no boot task svc.nope")
        #expect(journal.all == ["warm app://a", "start hook"])
        try await host.stop()
    }

    @Test("APP callbacks reach the session's delegate in order; unknown sessions are 404")
    func appCallbacks() async throws {
        let journal = Journal()
        final class Note: MicroAppDelegate {
            let journal: Journal
            init(_ journal: Journal) { self.journal = journal }
            func didCreate(_ session: AppSession) async { journal.add("didCreate \(session.id)") }
            func willPause(_ session: AppSession) async { journal.add("willPause") }
            func rootRoute(_ session: AppSession) async -> JSONValue { ["screen": "note"] }
            func perform(_ session: AppSession, action: String, body: JSONValue) async throws -> JSONValue {
                journal.add("perform \(action)")
                return ["done": body]
            }
        }
        let host = await HostHarness(Service("shell").app("note") { _ in Note(journal) })
        let record = SessionRecord(
            id: "s1", app: "note", params: [:], mode: .pushWithAnimation, host: "shell", state: .launching,
            parent: nil, createdAt: 1, updatedAt: 1)
        let created = await host.ask(
            .app(
                AppCallbackRequest(
                    session: "s1", app: "note", callback: .didCreate, arguments: ["record": record.json])))
        #expect(try created.json() == ["root": ["screen": "note"], "restored": false])
        let paused = await host.ask(
            .app(AppCallbackRequest(session: "s1", app: "note", callback: .willPause)), id: "q2")
        #expect(paused.status == .ok)
        let action = await host.ask(
            .app(
                AppCallbackRequest(
                    session: "s1", app: "note", callback: .action, arguments: ["action": "save", "body": 5])),
            id: "q3")
        #expect(try action.json() == ["done": 5])
        let stranger = await host.ask(
            .app(AppCallbackRequest(session: "s9", app: "note", callback: .willPause)), id: "q4")
        #expect(stranger.status == .notFound && stranger.errorMessage == "no session s9 in this host")
        #expect(journal.all == ["didCreate s1", "willPause", "perform save"])
        try await host.stop()
    }

    @Test(
        "a callback delivered again with the same id runs once; the stack changes it asks for carry ids made from it"
    )
    func callbacksRunOnce() async throws {
        let journal = Journal()
        final class Coordinator: MicroAppDelegate {
            let journal: Journal
            init(_ journal: Journal) { self.journal = journal }
            func childDidFinish(_ session: AppSession, child: SessionRecord, result: JSONValue) async {
                journal.add("childDidFinish \(child.app)")
                session.router.push("home")
            }
        }
        let host = await HostHarness(Service("shell").app("launcher") { _ in Coordinator(journal) })
        let record = SessionRecord(
            id: "s1", app: "launcher", params: [:], mode: .pushWithAnimation, host: "shell",
            state: .launching,
            parent: nil, createdAt: 1, updatedAt: 1)
        let child = SessionRecord(
            id: "s2", app: "login", params: [:], mode: .pushWithAnimation, host: "shell", state: .running,
            parent: "s1", createdAt: 1, updatedAt: 1)
        _ = await host.ask(
            .app(
                AppCallbackRequest(
                    session: "s1", app: "launcher", callback: .didCreate, arguments: ["record": record.json],
                    callbackID: "c1")))
        let finished = AppCallbackRequest(
            session: "s1", app: "launcher", callback: .childDidFinish,
            arguments: ["child": child.json, "result": ["signedIn": true]], callbackID: "c2")
        host.connection.deliver(.request(.app(finished), id: Array("q2".utf8)))
        var changes: [ClientRequest] = []
        while true {
            let command = await host.connection.nextCommand()
            if case .request(let request, _, _) = command { changes.append(request) }
            if case .answer(let reply) = command {
                #expect(reply.status == .ok)
                break
            }
        }
        #expect(
            changes.map { $0.controlRequest().header["opId"] } == ["c2.1"],
            "the push's id comes from the callback's")
        #expect(changes.first?.isRepeatable == true)
        let again = await host.ask(.app(finished), id: "q3")
        #expect(again.status == .ok)
        let recreated = await host.ask(
            .app(
                AppCallbackRequest(
                    session: "s1", app: "launcher", callback: .didCreate, arguments: ["record": record.json],
                    callbackID: "c9")),
            id: "q4")
        #expect(try recreated.json()["restored"] == false, "a session the host has is not made twice")
        let gone = await host.ask(
            .app(AppCallbackRequest(session: "s7", app: "launcher", callback: .willTerminate)), id: "q5")
        #expect(gone.status == .ok, "terminating a session the host no longer has is done already")
        #expect(journal.all == ["childDidFinish login"], "the second delivery did not run the delegate")
        try await host.stop()
    }

    @Test("INTERCEPT answers the interceptor's decision; without an interceptor the start is allowed")
    func intercepts() async throws {
        let host = await HostHarness(
            Service("gate").interceptStarts { request, _ in
                request.app == "home" ? .change(app: "login", params: ["next": "home"]) : .refuse("not today")
            })
        let changed = await host.ask(.intercept(AppStart(app: "home")))
        #expect(try changed.json() == ["action": "change", "app": "login", "params": ["next": "home"]])
        let refused = await host.ask(.intercept(AppStart(app: "other")), id: "q2")
        #expect(try refused.json() == ["action": "refuse", "reason": "not today"])
        try await host.stop()

        let plain = await HostHarness(Service("plain"))
        let allowed = await plain.ask(.intercept(AppStart(app: "home")))
        #expect(try allowed.json() == ["action": "allow"])
        try await plain.stop()
    }

    @Test("stop() runs willDestroy, then shuts the connection down, and run() returns")
    func stops() async throws {
        let journal = Journal()
        let host = await HostHarness(Service("svc").willDestroy { _ in journal.add("willDestroy") })
        host.runner.stop()
        guard case .shutdown = await host.connection.nextCommand() else {
            Issue.record("the runner shuts its connection down when stopped")
            return
        }
        try await host.running.value
        #expect(journal.all == ["willDestroy"])
    }
}

@Suite("LifelineClient without sockets", .timeLimit(.minutes(1)))
struct ClientRetryTests {
    @Test("an unanswered publish is sent again with the same publication id, and returns the receipt")
    func publishRetries() async throws {
        let connection = InMemoryConnection()
        let client = LifelineClient(brokerEndpoint: "inproc://none", deliver: { _ in }) { pending, deliver in
            connection.attach(pending, deliver)
            return connection
        }
        let publishing = Task { try await client.publish("com.example.order", ["n": 1]) }
        var attempts: [(ticket: UInt64, request: PublishRequest)] = []
        for attempt in 0..<2 {
            guard case .request(let request, let ticket, _) = await connection.nextCommand(),
                case .publish(let publish) = request
            else {
                Issue.record("attempt \(attempt) is a PUBLISH")
                return
            }
            attempts.append((ticket, publish))
            let answer: Result<ControlReply, LifelineError> =
                attempt == 0
                ? .failure(LifelineError(.timeout, "the broker did not answer PUBLISH within 2000 ms"))
                : .success(
                    ControlReply(
                        requestID: [],
                        json: ["event": "com.example.order", "sequence": 7, "epoch": 1, "subscribers": 0]))
            connection.deliver(.completion(ticket: ticket, answer))
        }
        let receipt = try await publishing.value
        #expect(receipt.sequence == 7)
        #expect(attempts.count == 2 && attempts[0].request.publishID != nil)
        #expect(attempts[0].request.publishID == attempts[1].request.publishID, "a retry keeps the id")
        #expect(attempts[0].ticket != attempts[1].ticket)
    }
}

@Suite(
    "A slow service stays bounded: its handlers' queue drops the oldest events and says so",
    .timeLimit(.minutes(1)))
struct SlowServiceTests {
    @Test(
        "the queue keeps at most its limit of events, dropping the oldest; other deliveries are never dropped"
    )
    func queueDropsOldest() {
        let queue = InboundQueue<Int>(limit: 3) { $0 >= 0 }
        #expect(queue.push(-1) == nil, "negative ones stand for dispatch steps: never dropped")
        #expect(queue.push(1) == nil && queue.push(2) == nil)
        #expect(queue.push(3) == 1, "full: the oldest event goes")
        #expect(queue.push(4) == 2)
        #expect(queue.count == 3)
    }

    @Test("events beyond --inbound-limit while a handler is stuck are dropped, counted and told to onGap")
    func slowHandler() async throws {
        let rig = await TickRig("slow", resumes: false)
        let (journal, gate, connection, runner, running) = (
            rig.journal, rig.gate, rig.connection, rig.runner, rig.running
        )
        func tick(_ sequence: UInt64) { rig.tick(sequence, flags: sequence == 3 ? 1 : 0) }
        tick(1)
        await gate.entered()
        for sequence in 2...10 { tick(UInt64(sequence)) }
        gate.open()
        runner.stop()
        try await running.value
        var acknowledged: (UInt64, String?)?
        while acknowledged == nil {
            if case .acknowledge(let sequence, _, let error) = await connection.nextCommand() {
                acknowledged = (sequence, error)
            }
        }
        #expect(
            acknowledged?.0 == 3 && acknowledged?.1 == "dropped: the handlers fell behind",
            "a dropped event its publisher waits on is acknowledged with the reason")
        #expect(
            journal.all == [
                "tick #1",
                "gap after #1: the handlers fell behind: the queue of 4 events was full and dropped 5 of #2...#6",
                "tick #7", "tick #8", "tick #9", "tick #10",
            ])
    }

    @Test(
        "a pause whose queue the handlers emptied before it began says at once that they have room; the pause ends when the connection takes it"
    )
    func pauseOnAnEmptiedQueueEndsAtOnce() {
        let queue = InboundQueue<ConnectionEvent>(limit: 2)
        let backpressure = HandlerBackpressure()
        let told = Mutex<[String]>([])
        let resumes = Mutex<[@Sendable () -> Void]>([])
        backpressure.attach { command in
            switch command {
            case .handlersFull(let name, let sequence, _):
                told.withLock { $0.append("full \(name) #\(sequence)") }
            case .handlersHaveRoom(let resume):
                told.withLock { $0.append("room") }
                resumes.withLock { $0.append(resume) }
            default: break
            }
        }
        func offer(_ sequence: UInt64) -> Bool {
            let message = BusMessage(
                name: "app.tick",
                header: BusHeader(
                    epoch: 7, sequence: sequence, topicSequence: sequence, flags: 0,
                    publishedWallNanoseconds: 0,
                    publishedMonotonicNanoseconds: 0), payload: Array("{}".utf8))
            return backpressure.offer(.event(message, receivedAt: 0, replayed: false), message, to: queue)
        }
        #expect(offer(1) && offer(2))
        #expect(!offer(3), "full")
        // The handler task emptied the queue without looking at the pause (it had not begun for it).
        _ = queue.poll()
        _ = queue.poll()
        #expect(!offer(4), "the pause goes on until the connection takes the room")
        #expect(told.withLock { $0 } == ["full app.tick #3", "room"])
        #expect(!offer(5))
        #expect(told.withLock { $0 }.count == 2, "told once per name, room once")
        for resume in resumes.withLock({ $0 }) { resume() }
        #expect(offer(6), "taking events again")
    }

    @Test(
        "a service that resumes from a cursor drops nothing when its handlers fall behind: the connection is told the first event refused, then that they have room"
    )
    func resumingServiceRefusesInsteadOfDropping() async throws {
        let rig = await TickRig("durable", resumes: true)
        let (journal, gate, connection, runner, running) = (
            rig.journal, rig.gate, rig.connection, rig.runner, rig.running
        )
        func tick(_ sequence: UInt64) { rig.tick(sequence) }
        tick(1)
        await gate.entered()
        for sequence in 2...10 { tick(UInt64(sequence)) }
        gate.open()
        var told: [String] = []
        while !told.contains("room") {
            switch await connection.nextCommand() {
            case .handlersFull(let name, let sequence, let topicSequence):
                told.append("full \(name) #\(sequence)/\(topicSequence)")
            case .handlersHaveRoom: told.append("room")
            default: break
            }
        }
        #expect(told == ["full app.tick #6/6", "room"], "told once per name, the first event refused")
        runner.stop()
        try await running.value
        #expect(
            journal.all == ["tick #1", "tick #2", "tick #3", "tick #4", "tick #5"], "no gap, nothing dropped")
    }
}

/// A service whose `app.tick` handler waits at `gate` on event #1 and journals each event, with a
/// queue of 4 (`resumes`: it has `.resume`), running over an ``InMemoryConnection`` that has joined.
struct TickRig {
    let journal = Journal()
    let gate = Gate()
    let connection = InMemoryConnection()
    let runner: ServiceRunner
    let running: Task<Void, any Error>

    init(_ name: String, resumes: Bool) async {
        var options = ServiceRunner.Options()
        options.inboundLimit = 4
        let (journal, gate, connection) = (self.journal, self.gate, self.connection)
        var service = Service(name)
            .on("app.tick") { event in
                if event.sequence == 1 { await gate.wait() }
                journal.add("tick #\(event.sequence)")
            }
            .onGap { notice, _ in journal.add("gap after #\(notice.after): \(notice.reason)") }
        if resumes { service = service.resume { nil } }
        let runner = ServiceRunner(service, options: options) { _, pending, sink in
            connection.attach(pending, sink)
            return connection
        }
        self.runner = runner
        running = Task { try await runner.run() }
        await connection.attached()
        connection.deliver(.joined(epoch: 7, first: true, sequence: 0, lifecycle: "active"))
    }

    /// Delivers `app.tick` #`sequence` from the bus.
    func tick(_ sequence: UInt64, flags: UInt64 = 0) {
        let header = BusHeader(
            epoch: 7, sequence: sequence, topicSequence: sequence, flags: flags, publishedWallNanoseconds: 0,
            publishedMonotonicNanoseconds: 0)
        connection.deliver(
            .event(
                BusMessage(name: "app.tick", header: header, payload: Array("{}".utf8)), receivedAt: 0,
                replayed: false))
    }
}

/// A door a handler waits at until the test opens it.
final class Gate: Sendable {
    private let state = Mutex<
        (
            open: Bool, inside: Bool, waiters: [CheckedContinuation<Void, Never>],
            watchers: [CheckedContinuation<Void, Never>]
        )
    >((false, false, [], []))

    func wait() async {
        await withCheckedContinuation { continuation in
            let (open, watchers) = state.withLock { state -> (Bool, [CheckedContinuation<Void, Never>]) in
                state.inside = true
                defer { state.watchers.removeAll() }
                if !state.open { state.waiters.append(continuation) }
                return (state.open, state.watchers)
            }
            for watcher in watchers { watcher.resume() }
            if open { continuation.resume() }
        }
    }

    /// Returns once a handler waits at the gate.
    func entered() async {
        await withCheckedContinuation { continuation in
            let inside = state.withLock { state in
                if !state.inside { state.watchers.append(continuation) }
                return state.inside
            }
            if inside { continuation.resume() }
        }
    }

    func open() {
        let waiters = state.withLock { state in
            state.open = true
            defer { state.waiters.removeAll() }
            return state.waiters
        }
        for waiter in waiters { waiter.resume() }
    }
}
