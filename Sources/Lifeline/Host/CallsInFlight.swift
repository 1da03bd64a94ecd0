import LifelineSupport
import Synchronization

/// The calls answered in tasks of their own on the socket thread (``ImmediateDelivery``), counted —
/// with their callers' deadlines and their tasks — so that the runner ends once the last of them
/// has, or once no caller waits for those still running.
final class CallsInFlight: Sendable {
    private struct State {
        var next: UInt64 = 0
        /// Each call: when its caller stops waiting (monotonic nanoseconds), and its task.
        var calls: [UInt64: (deadline: UInt64, task: Task<Void, Never>?)] = [:]
        var waiters: [CheckedContinuation<Void, Never>] = []
        /// The runner stopped waiting: a task recorded from now on is cancelled at once.
        var abandoned = false
    }

    private let state = Mutex(State())

    /// Counts a call whose caller waits `timeoutMilliseconds` from now; returns its token.
    private func begin(timeoutMilliseconds: Int) -> UInt64 {
        let deadline = SystemClock.monotonicNanoseconds() &+ UInt64(max(0, timeoutMilliseconds)) &* 1_000_000
        return state.withLock { state in
            state.next &+= 1
            state.calls[state.next] = (deadline, nil)
            return state.next
        }
    }

    /// Answers a call in a task of its own (preferring `executor`), counted until `answer` returns,
    /// its caller waiting `timeoutMilliseconds`.
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

    /// The task answering the call of `token` (cancelled if the runner stops waiting for it).
    private func running(_ token: UInt64, in task: Task<Void, Never>) {
        // A call that ended already is not kept; one the runner gave up on is cancelled.
        let abandoned = state.withLock { state -> Bool in
            if state.calls[token] != nil { state.calls[token]?.task = task }
            return state.abandoned
        }
        if abandoned { task.cancel() }
    }

    private func end(_ token: UInt64) {
        let waiters = state.withLock { state -> [CheckedContinuation<Void, Never>] in
            state.calls[token] = nil
            guard state.calls.isEmpty else { return [] }
            defer { state.waiters.removeAll() }
            return state.waiters
        }
        for waiter in waiters { waiter.resume() }
    }

    /// How many calls are in flight.
    var count: Int { state.withLock { $0.calls.count } }

    /// Returns once no call is in flight, or once every caller has stopped waiting (its deadline
    /// passed) and `grace` more: the calls still running then are cancelled and not waited for.
    /// Returns how many were left so.
    func drained(grace: Duration) async -> Int {
        let latest = state.withLock { $0.calls.values.map(\.deadline).max() }
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

    /// Cancels the calls still in flight and forgets them (their waiter, too, returns): returns how
    /// many.
    private func abandon() -> Int {
        let (count, left, waiters) = state.withLock { state in
            defer {
                state.calls.removeAll()
                state.waiters.removeAll()
                state.abandoned = true
            }
            return (state.calls.count, state.calls.values.compactMap(\.task), state.waiters)
        }
        for task in left { task.cancel() }
        for waiter in waiters { waiter.resume() }
        return count
    }

    /// Returns true once no call is in flight.
    private func idle() async -> Bool {
        await withCheckedContinuation { continuation in
            let idle = state.withLock { state -> Bool in
                if !state.calls.isEmpty { state.waiters.append(continuation) }
                return state.calls.isEmpty
            }
            if idle { continuation.resume() }
        }
        return true
    }
}
