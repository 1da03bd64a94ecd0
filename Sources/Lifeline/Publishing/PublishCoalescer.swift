import LifelineProtocol
import LifelineSupport
import Synchronization

/// Runs a client's ``PublishQueue``: awaited publishes and posted events go in, PUBLISH requests go
/// out through `send`, and the answers (on the socket thread) resume the waiters and send the next
/// batch without a hop through the concurrency pool. A batch the broker did not answer is sent again
/// with the same id (the broker publishes it once), after a pause, until its members' deadlines
/// pass; a refused batch is sent again one event at a time, so that only the bad events fail.
final class PublishCoalescer: Sendable {
    typealias Receipt = CancellableWaiter<PublishReceipt>
    typealias Queue = PublishQueue<Receipt, CancellableWaiter<Void>>
    /// Sends a PUBLISH and calls back with its answer (on any thread); returns what gives the
    /// request back (the connection forgets it, and calls back no more).
    typealias Send =
        @Sendable (
            PublishRequest, Duration, @escaping @Sendable (Result<ControlReply, LifelineError>) -> Void
        ) -> @Sendable () -> Void

    private struct State {
        var queue: Queue
        /// Posters waiting for room in the queue.
        var roomWaiters: [CancellableWaiter<Void>] = []
        /// The first failure of a posted event since the last ``flush()``, and how many failed.
        var postFailure: LifelineError?
        var failedPosts = 0
        /// Set by ``close()``: nothing is sent or sent again from then on.
        var closed = false
    }

    private let state: Mutex<State>
    private let send: Send
    /// Names the publications of this client: `token.counter`.
    private let token: String
    private let published = Atomic<UInt64>(0)

    /// The longest one attempt of a PUBLISH waits for its answer, by default.
    static let defaultAttempt = Duration.seconds(2)
    /// The longest one attempt waits here (and in the client's own retries): shorter with a broker
    /// group, whose leader may have gone (a repeat is answered once: it carries its publication id).
    let attempt: Duration
    /// The pause before an unanswered PUBLISH is sent again.
    static let retryPause = Duration.milliseconds(200)

    init(queue: Queue = Queue(), token: String, attempt: Duration = defaultAttempt, send: @escaping Send) {
        self.attempt = attempt
        self.state = Mutex(State(queue: queue))
        self.send = send
        self.token = token
    }

    /// Events queued and not yet sent.
    var queuedEvents: Int { state.withLock { $0.queue.queued } }

    /// A publication id of this client's, never given before.
    func nextID() -> String { "\(token).\(published.wrappingAdd(1, ordering: .relaxed).newValue)" }

    /// Publishes `event` in its turn and returns its own receipt.
    /// - Throws: ``LifelineError``: the broker's refusal of the event, or `.timeout` / `.unavailable`
    ///   when no answer came before `timeout`.
    func publish(_ event: PublishedEvent, timeout: Duration) async throws -> PublishReceipt {
        let deadline = Self.deadline(after: timeout)
        return try await CancellableWaiter.wait { waiter in
            self.add(.publication(.init(event: event, waiter: waiter, deadline: deadline)))
            // A cancelled publish not sent yet leaves the queue (one on its way is published).
            waiter.whenCancelled { self.withdraw(waiter) }
        }
    }

    /// Takes `waiter`'s event out of the queue if it is not sent yet, making room for posters.
    private func withdraw(_ waiter: Receipt) {
        let room = state.withLock { state -> [CancellableWaiter<Void>] in
            guard state.queue.withdraw(where: { $0.waiter === waiter }), state.queue.hasRoom else {
                return []
            }
            defer { state.roomWaiters.removeAll() }
            return state.roomWaiters
        }
        for poster in room { poster.resume(returning: ()) }
    }

    /// Queues `event` without waiting for its receipt; waits only while the queue is full. An
    /// event that may not share a PUBLISH (``PublishQueue/coalesces(_:)``) goes alone, in its turn.
    /// A task cancelled while it waits for room returns at once without queuing the event, which
    /// the next ``flush()`` reports as failed.
    func post(_ event: PublishedEvent, timeout: Duration) async {
        while !tryPost(event, timeout: timeout) {
            do {
                try await CancellableWaiter<Void>.wait { waiter in
                    let waiting = self.state.withLock { state in
                        if state.queue.hasRoom { return false }
                        state.roomWaiters.append(waiter)
                        return true
                    }
                    if !waiting { waiter.resume(returning: ()) }
                }
            } catch {
                state.withLock { state in
                    state.failedPosts += 1
                    if state.postFailure == nil {
                        state.postFailure = LifelineError(
                            .unavailable,
                            "posting '\(event.name)': its task was cancelled while the queue was full; it was not sent"
                        )
                    }
                }
                return
            }
        }
    }

    /// Queues `event` as ``post(_:timeout:)`` does, unless the queue is full: then returns false
    /// and queues nothing. (The loop of posts runs here without an `async` frame of its own.)
    func tryPost(_ event: PublishedEvent, timeout: Duration) -> Bool {
        let alone = !Queue.coalesces(event.name)
        let now = SystemClock.monotonicNanoseconds()
        let deadline = Self.deadline(after: timeout, from: now)
        let step = state.withLock { state -> Queue.Step? in
            guard state.queue.hasRoom || state.closed else { return nil }
            if state.closed {
                return Queue.Step(
                    batch: nil,
                    expired: [Queue.Member(event: event, waiter: nil, deadline: deadline, alone: alone)])
            }
            return state.queue.add(
                publication: Queue.Member(event: event, waiter: nil, deadline: deadline, alone: alone),
                now: now
            ) { self.nextID() }
        }
        guard let step else { return false }
        carryOut(step)
        return true
    }

    /// Returns once everything queued before the call has been answered (or given up), or at once
    /// when the task is cancelled.
    func settle() async {
        // A cancelled task stops waiting at once (its barrier passes unseen later).
        _ = try? await CancellableWaiter<Void>.wait { barrier in self.add(.barrier(barrier)) }
    }

    /// Waits until everything posted before the call has been answered, then reports the first
    /// posted event that failed since the last flush.
    /// - Throws: ``LifelineError`` naming the first failed event and how many failed;
    ///   `CancellationError` at once when the task is cancelled.
    func flush() async throws {
        await settle()
        try Task.checkCancellation()
        let (failure, count) = state.withLock { state in
            defer { (state.postFailure, state.failedPosts) = (nil, 0) }
            return (state.postFailure, state.failedPosts)
        }
        guard let failure else { return }
        if count == 1 { throw failure }
        throw LifelineError(failure.status, "\(count) posted events failed; the first: \(failure.message)")
    }

    /// Fails whatever is queued or sent from now on at once, with `.unavailable` (the connection
    /// has closed): nothing is sent again.
    func close() {
        state.withLock { $0.closed = true }
    }

    private func add(_ entry: Queue.Entry) {
        let step = state.withLock { state in
            if state.closed {
                switch entry {
                case .barrier(let barrier): return Queue.Step(batch: nil, passed: [barrier])
                case .publication(let member): return Queue.Step(batch: nil, expired: [member])
                }
            }
            return add(entry, to: &state)
        }
        carryOut(step)
    }

    private func add(_ entry: Queue.Entry, to state: inout State) -> Queue.Step {
        state.queue.add(entry, now: SystemClock.monotonicNanoseconds()) { self.nextID() }
    }

    private func carryOut(_ step: Queue.Step) {
        for barrier in step.passed { barrier.resume(returning: ()) }
        if !step.expired.isEmpty {
            let closed = state.withLock { $0.closed }
            fail(
                step.expired,
                closed
                    ? Self.closedError
                    : LifelineError(
                        .timeout, "not sent: its timeout passed while the publications before it were out"))
        }
        if let batch = step.batch { launch(batch) }
    }

    static let closedError = LifelineError(.unavailable, "the client was closed")

    /// `timeout` from now, in monotonic nanoseconds (a very long one is cut to a century).
    static func deadline(after timeout: Duration, from now: UInt64 = SystemClock.monotonicNanoseconds())
        -> UInt64
    {
        now &+ min(timeout, .seconds(3_153_600_000)).wholeNanoseconds
    }

    private var isClosed: Bool { state.withLock { $0.closed } }

    /// Publishes `request` — not queued: an acknowledged event, or a batch of
    /// ``LifelineClient/publish(contentsOf:batchSize:window:timeout:)`` — by the one retry rule the queue's batches
    /// follow, and returns its receipt (the whole request's). `wholeTime`: one attempt takes all the
    /// time left (an acknowledged event waits for its handlers).
    /// - Throws: ``LifelineError``: the broker's refusal, or `.timeout` / `.unavailable` when no
    ///   answer came before `deadline` (monotonic nanoseconds); `CancellationError` at once when the
    ///   task is cancelled (a request on its way may still be published).
    func publish(_ request: PublishRequest, deadline: UInt64, wholeTime: Bool) async throws -> PublishReceipt
    {
        try await CancellableWaiter.wait { waiter in
            let member = Queue.Member(
                event: request.event(at: 0), waiter: waiter, deadline: deadline, alone: true)
            let control = FlightControl(wholeTime: wholeTime) {}
            self.launch(Queue.Batch(request: request, members: [member]), control)
            // Given back at once: not sent again, and the connection forgets the attempt out.
            waiter.whenCancelled { control.cancel() }
        }
    }

    /// The one retry rule. Sends `batch` — each attempt waiting at most ``attempt`` (all the time
    /// left with `wholeTime`) — and, when it is not answered, sends it again with its id after
    /// ``retryPause`` while a member's deadline is ahead, failing those whose deadline passed. A
    /// refused batch of several members goes again one event at a time. Then `done` runs (by default
    /// the queue sends its next batch).
    private func launch(_ batch: consuming Queue.Batch, _ control: FlightControl = .queue) {
        let remaining = Int64(clamping: batch.deadline) &- Int64(clamping: SystemClock.monotonicNanoseconds())
        let left = Duration.nanoseconds(max(1_000_000, remaining))
        let request = batch.request
        // Boxed once: the answer's handler holds the batch without a copy of each member.
        let flight = InFlight(batch, control)
        control.sent {
            send(request, control.wholeTime ? left : min(attempt, left)) { result in
                self.finish(flight, result)
            }
        }
    }

    /// A batch on its way, held by the handler of its answer.
    private final class InFlight: Sendable {
        let batch: Queue.Batch
        let control: FlightControl

        init(_ batch: consuming Queue.Batch, _ control: FlightControl) {
            self.batch = batch
            self.control = control
        }
    }

    /// What one publication's attempts share: how long each waits, what runs once it is settled (nil:
    /// the queue sends its next batch), and its cancellation.
    private final class FlightControl: Sendable {
        let wholeTime: Bool
        let done: (@Sendable () -> Void)?
        private let attempt = Mutex<(cancelled: Bool, giveBack: (@Sendable () -> Void)?)>((false, nil))

        /// A queue batch's: attempts of the coalescer's length, then the next batch; not cancelled
        /// (a queued publish that is cancelled leaves the queue; one on its way is published).
        static let queue = FlightControl(wholeTime: false, done: nil)

        init(wholeTime: Bool, done: (@Sendable () -> Void)?) {
            self.wholeTime = wholeTime
            self.done = done
        }

        /// Sends an attempt with `send` (which returns what gives it back), unless cancelled. The
        /// answer may come before `send` returns: nothing is locked meanwhile.
        func sent(_ send: () -> @Sendable () -> Void) {
            guard done != nil else {
                _ = send()
                return
            }
            guard !isCancelled else { return }
            let giveBack = send()
            let cancelled = attempt.withLock { attempt in
                if !attempt.cancelled { attempt.giveBack = giveBack }
                return attempt.cancelled
            }
            if cancelled { giveBack() }
        }

        var isCancelled: Bool { attempt.withLock { $0.cancelled } }

        /// No attempt from now on; the one out is given back.
        func cancel() {
            let giveBack = attempt.withLock { attempt in
                attempt.cancelled = true
                defer { attempt.giveBack = nil }
                return attempt.giveBack
            }
            giveBack?()
        }
    }

    private func finish(_ flight: InFlight, _ result: Result<ControlReply, LifelineError>) {
        let batch = flight.batch
        let control = flight.control
        let settled = { if let done = control.done { done() } else { self.batchDone() } }
        switch result {
        case .success(let reply):
            // Posted events need no receipt: a loop of posts is not made to cut one per event.
            if batch.hasWaiters {
                do {
                    let receipt = try PublishReceipt(body: reply.body)
                    for (member, own) in zip(batch.members, Queue.receipts(for: batch.members, from: receipt))
                    {
                        member.waiter?.resume(returning: own)
                    }
                } catch {
                    fail(
                        batch.members,
                        LifelineError(.unavailable, "the broker's receipt is not JSON: \(error)"))
                }
            }
            settled()
        case .failure(let error) where error.isWorthRetrying:
            let retryAt = SystemClock.monotonicNanoseconds() &+ Self.retryPause.wholeNanoseconds
            let closed = isClosed
            var again = batch
            var expired: [Queue.Member] = []
            for index in again.members.indices
            where !again.members[index].givenUp && (closed || again.members[index].deadline <= retryAt) {
                expired.append(again.members[index])
                again.members[index].givenUp = true
                again.members[index].waiter = nil
            }
            fail(expired, closed ? Self.closedError : error)
            guard again.members.contains(where: { !$0.givenUp }) else {
                settled()
                return
            }
            Task {
                try? await Task.sleep(for: Self.retryPause)
                if control.isCancelled { return settled() }
                self.launch(again, control)
            }
        case .failure(let error) where batch.members.count == 1 || error.isFinal:
            // One event, or a failure of the client's own that no event of the batch caused.
            fail(batch.members, error)
            settled()
        case .failure:
            Task {
                await self.publishOneByOne(batch.members)
                settled()
            }
        }
    }

    /// A refused batch's members, each as its own PUBLISH (a fresh id: the broker remembers no
    /// refusal), in order: the good ones are published, the bad ones fail with their own reason.
    private func publishOneByOne(_ members: [Queue.Member]) async {
        for member in members where !member.givenUp {
            let alone = Queue.Batch(
                request: PublishRequest(
                    event: member.event.name, payload: member.event.payload, publishID: nextID()),
                members: [member])
            await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
                launch(alone, FlightControl(wholeTime: false) { done.resume() })
            }
        }
    }

    private func fail(_ members: [Queue.Member], _ error: LifelineError) {
        var posted = 0
        for member in members where !member.givenUp {
            if let waiter = member.waiter {
                waiter.resume(throwing: error)
            } else {
                posted += 1
            }
        }
        guard posted > 0 else { return }
        let name = members.first { $0.waiter == nil && !$0.givenUp }?.event.name.rawValue ?? ""
        state.withLock { state in
            if state.postFailure == nil {
                state.postFailure = LifelineError(error.status, "posting '\(name)': \(error.message)")
            }
            state.failedPosts += posted
        }
    }

    private func batchDone() {
        let (step, room) = state.withLock { state -> (Queue.Step, [CancellableWaiter<Void>]) in
            let step = state.queue.batchDone(now: SystemClock.monotonicNanoseconds()) { self.nextID() }
            guard state.queue.hasRoom else { return (step, []) }
            defer { state.roomWaiters.removeAll() }
            return (step, state.roomWaiters)
        }
        for waiter in room { waiter.resume(returning: ()) }
        carryOut(step)
    }
}
