import LifelineSupport
import Synchronization

/// The requests a service answers in tasks of their own — calls (started on the socket thread by
/// ``ImmediateDelivery``), start hooks, boot tasks, app callbacks — counted with the deadlines their
/// senders wait for and their tasks, so that the runner ends once the last of them has, or once
/// nobody waits for those still running.
final class RequestsInFlight: Sendable {
    private struct State {
        var next: UInt64 = 0
        /// Each request: when its sender stops waiting (monotonic nanoseconds), and its task.
        var requests: [UInt64: (deadline: UInt64, task: Task<Void, Never>?)] = [:]
        var waiters: [CheckedContinuation<Void, Never>] = []
        /// The runner stopped waiting: a task recorded from now on is cancelled at once.
        var abandoned = false
    }

    private let state = Mutex(State())

    /// Counts a request whose sender waits `timeoutMilliseconds` from now; returns its token.
    private func begin(timeoutMilliseconds: Int) -> UInt64 {
        let deadline = SystemClock.monotonicNanoseconds() &+ UInt64(max(0, timeoutMilliseconds)) &* 1_000_000
        return state.withLock { state in
            state.next &+= 1
            state.requests[state.next] = (deadline, nil)
            return state.next
        }
    }

    /// Answers a request in a task of its own (preferring `executor`), counted until `answer` returns,
    /// its sender waiting `timeoutMilliseconds`.
    func track(
        timeoutMilliseconds: Int, executor: (any TaskExecutor)?,
        _ answer: @escaping @Sendable () async -> Void
    ) {
        let token = begin(timeoutMilliseconds: timeoutMilliseconds)
        let task = Task(executorPreference: executor) {
            await answer()
            self.end(token)
        }
        running(token, in: task)
    }

    /// The task answering the request of `token` (cancelled if the runner stops waiting for it).
    private func running(_ token: UInt64, in task: Task<Void, Never>) {
        // A request that ended already is not kept; one the runner gave up on is cancelled.
        let abandoned = state.withLock { state -> Bool in
            if state.requests[token] != nil { state.requests[token]?.task = task }
            return state.abandoned
        }
        if abandoned { task.cancel() }
    }

    private func end(_ token: UInt64) {
        let waiters = state.withLock { state -> [CheckedContinuation<Void, Never>] in
            state.requests[token] = nil
            guard state.requests.isEmpty else { return [] }
            defer { state.waiters.removeAll() }
            return state.waiters
        }
        for waiter in waiters { waiter.resume() }
    }

    /// How many requests are in flight.
    var count: Int { state.withLock { $0.requests.count } }

    /// Returns once no request is in flight, or once every sender has stopped waiting (its deadline
    /// passed) and `grace` more: the requests still running then are cancelled and not waited for.
    /// Returns how many were left so.
    func drained(grace: Duration) async -> Int {
        let latest = state.withLock { $0.requests.values.map(\.deadline).max() }
        guard let latest else { return 0 }
        let now = SystemClock.monotonicNanoseconds()
        let wait = Duration.nanoseconds(Int64(clamping: latest > now ? latest - now : 0)) + grace
        return await withTaskGroup(of: Bool.self) { group in
            group.addTask { await self.idle() }
            group.addTask {
                try? await Task.sleep(for: wait)
                return false
            }
            let idle = await group.next() ?? false
            group.cancelAll()
            return idle ? 0 : abandon()
        }
    }

    /// Cancels the requests still in flight and forgets them (their waiter, too, returns): returns how
    /// many.
    private func abandon() -> Int {
        let (count, left, waiters) = state.withLock { state in
            defer {
                state.requests.removeAll()
                state.waiters.removeAll()
                state.abandoned = true
            }
            return (state.requests.count, state.requests.values.compactMap(\.task), state.waiters)
        }
        for task in left { task.cancel() }
        for waiter in waiters { waiter.resume() }
        return count
    }

    /// Returns true once no request is in flight.
    private func idle() async -> Bool {
        await withCheckedContinuation { continuation in
            let idle = state.withLock { state -> Bool in
                if !state.requests.isEmpty { state.waiters.append(continuation) }
                return state.requests.isEmpty
            }
            if idle { continuation.resume() }
        }
        return true
    }
}
