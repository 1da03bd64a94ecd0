import Dispatch
import LifelineProtocol
import Synchronization
import Testing

@testable import Lifeline

/// Plays the broker's PUBLISH on a serial queue standing for the socket thread: sequences, remembers
/// publication ids, refuses a batch that holds a bad event (naming it), and can hold its answers or
/// lose one.
private final class FakeBroker: Sendable {
    struct State {
        var sequence: UInt64 = 0
        var published: [PublishedEvent] = []
        var remembered: [String: [UInt8]] = [:]
        var requests: [PublishRequest] = []
        var held: [@Sendable () -> Void] = []
        var holding = false
        /// Requests lost on the way: the connection times each out.
        var dropping = false
        /// Ids whose first copy is published but whose answer is lost.
        var loseAnswer: Set<String> = []
        var subscribers: [String: Int] = [:]
        /// PUBLISH requests handed to `send`, answered or not.
        var sent = 0
    }

    let state = Mutex(State())
    private let socketThread = DispatchQueue(label: "fake-socket-thread")

    func hold() { state.withLock { $0.holding = true } }

    /// Answers what is held; with `holdingOn`, holds what comes after.
    func release(holdingOn: Bool = false) {
        let held = state.withLock { state in
            state.holding = holdingOn
            defer { state.held.removeAll() }
            return state.held
        }
        for answer in held { socketThread.async(execute: answer) }
    }

    var published: [PublishedEvent] { state.withLock { $0.published } }
    var requests: [PublishRequest] { state.withLock { $0.requests } }

    func send(
        _ request: PublishRequest, _ timeout: Duration,
        _ completion: @escaping @Sendable (Result<ControlReply, LifelineError>) -> Void
    ) -> @Sendable () -> Void {
        send(request, timeout, completion, nothing: ())
        return {}
    }

    private func send(
        _ request: PublishRequest, _ timeout: Duration,
        _ completion: @escaping @Sendable (Result<ControlReply, LifelineError>) -> Void, nothing: Void
    ) {
        let dropping = state.withLock { state in
            state.sent += 1
            return state.dropping
        }
        if dropping {
            socketThread.asyncAfter(deadline: .now() + .nanoseconds(Int(timeout.wholeNanoseconds))) {
                completion(.failure(LifelineError(.timeout, "PUBLISH was not answered within \(timeout)")))
            }
            return
        }
        let answer: @Sendable () -> Void = { completion(self.handle(request)) }
        let holding = state.withLock { state in
            if state.holding { state.held.append(answer) }
            return state.holding
        }
        if !holding { socketThread.async(execute: answer) }
    }

    private func handle(_ request: PublishRequest) -> Result<ControlReply, LifelineError> {
        state.withLock { state in
            state.requests.append(request)
            let id = request.publishID ?? ""
            if let body = state.remembered[id] {
                return .success(ControlReply(requestID: [], status: .ok, body: body))
            }
            if let bad = request.events.firstIndex(where: { $0.name.rawValue.hasPrefix("bad.") }) {
                let name = request.events[bad].name.rawValue
                let message =
                    request.count == 1
                    ? "\(name) is refused"
                    : "event \(bad + 1) of \(request.count) (\(name)): \(name) is refused"
                return .failure(LifelineError(.unprocessable, message))
            }
            state.published += request.events
            state.sequence += UInt64(request.count)
            var receipt = PublishReceipt(
                event: request.events.last!.name, sequence: state.sequence, epoch: 1,
                subscribers: state.subscribers.values.reduce(0, +), lifecycle: .active)
            receipt.count = request.count
            if request.isMixed {
                receipt.subscribersByEvent = Dictionary(
                    uniqueKeysWithValues: Set(request.events.map(\.name.rawValue)).map {
                        ($0, state.subscribers[$0] ?? 0)
                    })
            } else {
                receipt.subscribers = state.subscribers[request.event.rawValue] ?? 0
            }
            state.remembered[id] = receipt.body
            if state.loseAnswer.remove(id) != nil {
                return .failure(LifelineError(.timeout, "PUBLISH was not answered"))
            }
            return .success(ControlReply(requestID: [], status: .ok, body: receipt.body))
        }
    }
}

@Suite(
    "Coalesced publishing against a broker that answers late, loses answers and refuses",
    .timeLimit(.minutes(1)))
struct PublishCoalescerTests {
    private func waitUntil(_ condition: () -> Bool) async throws {
        while !condition() { try await Task.sleep(for: .milliseconds(1)) }
    }

    @Test("publishes from many tasks while one is out leave as one batch; each gets its own receipt")
    func manyTasks() async throws {
        let broker = FakeBroker()
        broker.state.withLock { $0.subscribers = ["a.x": 2, "b.y": 1] }
        let coalescer = PublishCoalescer(token: "t", send: broker.send)
        broker.hold()
        var all: [String: PublishReceipt] = [:]
        try await withThrowingTaskGroup(of: Dictionary<String, PublishReceipt>.self) { group in
            for n in 0..<200 {
                group.addTask {
                    let name: EventName = n % 3 == 0 ? "b.y" : "a.x"
                    let payload = "{\"n\":\(n)}"
                    let receipt = try await coalescer.publish(
                        PublishedEvent(name, payload: Array(payload.utf8)), timeout: .seconds(10))
                    return [payload: receipt]
                }
            }
            try await waitUntil { coalescer.queuedEvents == 199 }
            broker.release()
            for try await one in group { all.merge(one) { $1 } }
        }
        #expect(
            broker.requests.map(\.count) == [1, 199], "the first alone, the 199 behind it in one PUBLISH")
        let published = broker.published
        #expect(published.count == 200)
        for (index, event) in published.enumerated() {
            let receipt = try #require(all[String(decoding: event.payload, as: UTF8.self)])
            #expect(receipt.sequence == UInt64(index + 1) && receipt.event == event.name)
            #expect(receipt.subscribers == (event.name == "b.y" ? 1 : 2))
        }
    }

    @Test("a loop of posts keeps its order and leaves in few PUBLISHes; flush waits for the last answer")
    func postsInOrder() async throws {
        let broker = FakeBroker()
        let coalescer = PublishCoalescer(token: "t", send: broker.send)
        let count = 20_000
        let whileHeld = 500
        broker.hold()
        for n in 0..<count {
            if n == whileHeld {
                try await waitUntil { broker.state.withLock { $0.held.count == 1 } }
                broker.release(holdingOn: true)
                try await waitUntil { broker.state.withLock { $0.held.count == 1 } }
                broker.release()
            }
            await coalescer.post(PublishedEvent("a.x", payload: Array("\(n)".utf8)), timeout: .seconds(10))
        }
        try await coalescer.flush()
        #expect(
            broker.published.map { String(decoding: $0.payload, as: UTF8.self) }
                == (0..<count).map(String.init))
        #expect(
            broker.requests.prefix(2).map(\.count) == [1, whileHeld - 1],
            "the first post alone, those behind it while it is out in one PUBLISH")
        #expect(broker.requests.count <= count)
        #expect(Set(broker.requests.compactMap(\.publishID)).count == broker.requests.count)
    }

    /// A broker that holds its answers until released and loses the first answer to `id`.
    private func holdingBroker(losingTheAnswerTo id: String) -> (FakeBroker, PublishCoalescer) {
        let broker = FakeBroker()
        broker.state.withLock { $0.loseAnswer = [id] }
        broker.hold()
        return (broker, PublishCoalescer(token: "t", send: broker.send))
    }

    @Test("an unanswered batch is sent again with its id and published once; order holds behind it")
    func lostAnswer() async throws {
        let (broker, coalescer) = holdingBroker(losingTheAnswerTo: "t.2")
        async let first = coalescer.publish(
            PublishedEvent("a.x", payload: Array("0".utf8)), timeout: .seconds(10))
        try await waitUntil { broker.state.withLock { $0.held.count == 1 } }
        for n in 1...3 {
            await coalescer.post(PublishedEvent("a.x", payload: Array("\(n)".utf8)), timeout: .seconds(10))
        }
        broker.release()
        #expect(try await first.sequence == 1)
        // Once the batch of 1…3 is out (its answer lost): 4 waits behind it and its repeat.
        try await waitUntil { broker.requests.count >= 2 }
        await coalescer.post(PublishedEvent("a.x", payload: Array("4".utf8)), timeout: .seconds(10))
        try await coalescer.flush()
        #expect(
            broker.published.map { String(decoding: $0.payload, as: UTF8.self) } == ["0", "1", "2", "3", "4"])
        #expect(broker.requests.map(\.publishID) == ["t.1", "t.2", "t.2", "t.3"], "t.2 again, not a new id")
    }

    @Test("members given up while their batch is sent again stay in it: the others get their own receipts")
    func partlyGivenUp() async throws {
        let (broker, coalescer) = holdingBroker(losingTheAnswerTo: "t.2")
        let first = Task {
            try await coalescer.publish(
                PublishedEvent("a.x", payload: Array("0".utf8)), timeout: .seconds(10))
        }
        try await waitUntil { broker.state.withLock { $0.held.count == 1 } }
        let short = Task {
            try await coalescer.publish(
                PublishedEvent("a.x", payload: Array("1".utf8)), timeout: .seconds(2))
        }
        let long = Task {
            try await coalescer.publish(
                PublishedEvent("b.y", payload: Array("2".utf8)), timeout: .seconds(10))
        }
        try await waitUntil { coalescer.queuedEvents == 2 }
        let queued = ContinuousClock.now
        broker.release(holdingOn: true)
        #expect(try await first.value.sequence == 1)
        // The batch of 1 and 2 is out; its answer, lost, comes back once the short deadline is
        // nearer than the pause before the batch is sent again.
        try await waitUntil { broker.state.withLock { $0.held.count == 1 } }
        try await Task.sleep(until: queued + .milliseconds(1_850))
        broker.release()
        await #expect(throws: LifelineError.self) { try await short.value }
        let receipt = try await long.value
        #expect(
            receipt.sequence == 3 && receipt.event == "b.y",
            "its own place in the batch, though the one before it gave up")
        #expect(broker.requests.map(\.publishID) == ["t.1", "t.2", "t.2"])
        #expect(broker.published.map { String(decoding: $0.payload, as: UTF8.self) } == ["0", "1", "2"])
    }

    @Test("after close, publishes and posts fail at once with unavailable, and flush says so")
    func closed() async throws {
        let broker = FakeBroker()
        let coalescer = PublishCoalescer(token: "t", send: broker.send)
        coalescer.close()
        await #expect(throws: PublishCoalescer.closedError) {
            try await coalescer.publish(PublishedEvent("a.x", payload: []), timeout: .seconds(10))
        }
        await coalescer.post(PublishedEvent("a.x", payload: []), timeout: .seconds(10))
        await #expect(throws: LifelineError.self) { try await coalescer.flush() }
        #expect(broker.requests.isEmpty)
    }

    @Test("a refused batch is sent again event by event: only the bad event fails, with its own reason")
    func refusedBatch() async throws {
        let broker = FakeBroker()
        let coalescer = PublishCoalescer(token: "t", send: broker.send)
        broker.hold()
        async let first = coalescer.publish(
            PublishedEvent("a.x", payload: Array("0".utf8)), timeout: .seconds(10))
        try await waitUntil { broker.state.withLock { $0.held.count == 1 } }
        async let good = coalescer.publish(
            PublishedEvent("a.x", payload: Array("1".utf8)), timeout: .seconds(10))
        async let bad = coalescer.publish(
            PublishedEvent("bad.x", payload: Array("2".utf8)), timeout: .seconds(10))
        try await waitUntil { coalescer.queuedEvents == 2 }
        await coalescer.post(PublishedEvent("bad.y", payload: Array("3".utf8)), timeout: .seconds(10))
        await coalescer.post(PublishedEvent("a.x", payload: Array("4".utf8)), timeout: .seconds(10))
        broker.release()
        #expect(try await first.sequence == 1)
        #expect(try await good.sequence == 2)
        do {
            _ = try await bad
            Issue.record("the bad event was published")
        } catch let error as LifelineError {
            #expect(error.status == .unprocessable && error.message == "bad.x is refused")
        }
        do {
            try await coalescer.flush()
            Issue.record("flush did not report the bad post")
        } catch let error as LifelineError {
            #expect(error.message == "posting 'bad.y': bad.y is refused")
        }
        try await coalescer.flush()
        #expect(broker.published.map { String(decoding: $0.payload, as: UTF8.self) } == ["0", "1", "4"])
    }

    @Test("settle returns once what was queued before it is answered; at once when nothing is")
    func settle() async throws {
        let broker = FakeBroker()
        let coalescer = PublishCoalescer(token: "t", send: broker.send)
        await coalescer.settle()
        broker.hold()
        await coalescer.post(PublishedEvent("a.x", payload: []), timeout: .seconds(10))
        await coalescer.post(PublishedEvent("a.x", payload: []), timeout: .seconds(10))
        let settled = Atomic<Bool>(false)
        let waiter = Task {
            await coalescer.settle()
            settled.store(true, ordering: .relaxed)
        }
        try await waitUntil { broker.state.withLock { $0.held.count == 1 } }
        let early = settled.load(ordering: .relaxed)
        #expect(!early)
        broker.release()
        await waiter.value
        #expect(broker.published.count == 2)
    }

    @Test("with no answer before its deadline a publish throws the timeout and a post is reported by flush")
    func deadline() async throws {
        let broker = FakeBroker()
        let coalescer = PublishCoalescer(token: "t", send: broker.send)
        broker.state.withLock { $0.dropping = true }
        let late = Task {
            try await coalescer.publish(PublishedEvent("a.x", payload: []), timeout: .milliseconds(50))
        }
        try await waitUntil { broker.state.withLock { $0.sent == 1 } }
        await coalescer.post(PublishedEvent("a.y", payload: []), timeout: .milliseconds(50))
        await #expect(throws: LifelineError.self) { try await late.value }
        do {
            try await coalescer.flush()
            Issue.record("flush did not report the lost post")
        } catch let error as LifelineError {
            #expect(error.status == .timeout && error.message.hasPrefix("posting 'a.y'"))
        }
    }
}
