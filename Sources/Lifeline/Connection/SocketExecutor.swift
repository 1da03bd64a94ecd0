import LifelineSupport
import Synchronization

/// A connection's socket thread as a task executor. The tasks that answer a service's calls, and the
/// client calls awaited in them, run on the thread that reads their requests and replies, between
/// turns of its loop: a reply resumes its task and an answer leaves without waking another thread
/// (on a busy two-core host, each such wake-up cost up to a few milliseconds).
///
/// A job that holds the thread past ``holdLimit`` does not stall the connection: ``LoopMonitor``
/// hands the loop to a new thread, and the held one ends once its job returns. While
/// ``maximumHeld`` threads are held so, jobs go to the Swift pool instead.
final class SocketExecutor: TaskExecutor {
    /// How long one job may hold the socket thread before another thread takes the loop over.
    static let holdLimit: Duration = .milliseconds(20)
    /// How many held threads (each still running its job) send further jobs to the Swift pool.
    static let maximumHeld = 4

    private struct State {
        var queue: [UnownedJob] = []
        var head = 0
        /// The loop's current thread: one that finds another token after its job was replaced.
        var token: UInt64 = 0
        /// When the job running now started (0: none runs).
        var jobStarted: UInt64 = 0
        /// Replaced threads still running their job.
        var held = 0
        var closed = false
        /// Starts a thread that runs the loop as `token`.
        var takeOver: (@Sendable (UInt64) -> Void)?
    }

    private let state = Mutex(State())
    private let owner: OwnerThread
    /// Makes the loop's wait return (it looks for jobs before it waits again).
    private let wake: @Sendable () -> Void
    /// Says what happened on the connection's log.
    private let log: @Sendable (String) -> Void

    init(
        owner: OwnerThread, wake: @escaping @Sendable () -> Void, log: @escaping @Sendable (String) -> Void
    ) {
        self.owner = owner
        self.wake = wake
        self.log = log
    }

    /// Sets how the loop moves to a new thread (before the loop first runs a job).
    func onTakeOver(_ start: @escaping @Sendable (UInt64) -> Void) {
        state.withLock { $0.takeOver = start }
    }

    func enqueue(_ job: consuming ExecutorJob) {
        let unowned = UnownedJob(job)
        let queued = state.withLock { state -> Bool? in
            guard !state.closed, state.held < Self.maximumHeld else { return nil }
            state.queue.append(unowned)
            return state.queue.count - state.head == 1
        }
        guard let queued else {
            globalConcurrentExecutor.enqueue(unowned)
            return
        }
        // The loop looks for jobs before it waits: only another thread's first job needs a wake-up.
        if queued && !owner.isCurrent { wake() }
    }

    /// True while a job runs.
    var isRunningJob: Bool { state.withLock { $0.jobStarted != 0 } }

    /// True when jobs wait to run.
    var hasJobs: Bool { state.withLock { $0.queue.count > $0.head } }

    /// Runs the jobs that wait now (not those they queue: the loop takes its turn first) on the
    /// loop's thread `token`; false when the loop was taken over while one ran (this thread must
    /// then leave the loop alone). While ``maximumHeld`` threads are held, the waiting jobs go to
    /// the Swift pool instead.
    func runJobs(as token: UInt64) -> Bool {
        let (end, overflow) = state.withLock { state -> (Int, ArraySlice<UnownedJob>) in
            guard state.held >= Self.maximumHeld, state.head < state.queue.count else {
                return (state.queue.count, [])
            }
            let waiting = state.queue[state.head...]
            state.queue.removeAll(keepingCapacity: true)
            state.head = 0
            return (0, waiting)
        }
        for job in overflow { globalConcurrentExecutor.enqueue(job) }
        while true {
            let now = SystemClock.monotonicNanoseconds()
            let next = state.withLock { state -> UnownedJob? in
                guard state.head < end, state.head < state.queue.count else {
                    if state.head >= state.queue.count {
                        state.queue.removeAll(keepingCapacity: true)
                        state.head = 0
                    }
                    return nil
                }
                defer { state.head += 1 }
                state.jobStarted = max(now, 1)
                return state.queue[state.head]
            }
            guard let next else { return true }
            LoopMonitor.shared.noteActivity()
            next.runSynchronously(on: asUnownedTaskExecutor())
            let stillOwner = state.withLock { state -> Bool in
                guard state.token == token else {
                    state.held -= 1
                    return false
                }
                state.jobStarted = 0
                return true
            }
            if !stillOwner {
                // What the job posted while this thread still looked like the owner is seen now.
                wake()
                return false
            }
        }
    }

    /// Hands the loop to a new thread when a job has held it for longer than `limit` (ns).
    func takeOverIfHeld(now: UInt64, limit: UInt64) {
        let taken = state.withLock {
            state -> (start: @Sendable (UInt64) -> Void, token: UInt64, held: UInt64)? in
            // `now` may have been read before the job started.
            guard !state.closed, state.jobStarted != 0, now > state.jobStarted,
                now - state.jobStarted > limit,
                let start = state.takeOver
            else { return nil }
            let held = now - state.jobStarted
            state.token &+= 1
            state.jobStarted = 0
            state.held += 1
            return (start, state.token, held)
        }
        guard let taken else { return }
        log(
            "a task has held the socket thread for \(taken.held / 1_000_000) ms: another thread serves the connection now (long computation belongs on the Swift pool: `await Task.detached { … }.value`)"
        )
        taken.start(taken.token)
    }

    /// From now on jobs run on the Swift pool; those still waiting go there now.
    func close() {
        let left = state.withLock { state -> ArraySlice<UnownedJob> in
            state.closed = true
            state.takeOver = nil
            defer {
                state.queue.removeAll()
                state.head = 0
            }
            return state.queue[state.head...]
        }
        for job in left { globalConcurrentExecutor.enqueue(job) }
        LoopMonitor.shared.unwatch(self)
    }
}
