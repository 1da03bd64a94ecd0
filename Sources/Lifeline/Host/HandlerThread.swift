import Foundation
import Synchronization

/// A thread of the service's own that runs its ordered handler loop (a task executor the loop's task
/// prefers): events are handled one at a time in bus order, off the socket thread, without waking a
/// thread of the shared pool for each one. A handler that computes or blocks holds only this thread:
/// heartbeats (the socket thread) and calls (the Swift pool) go on. Once closed, jobs go to the
/// global executor, so no task waits forever.
final class HandlerThread: TaskExecutor, @unchecked Sendable {
    private struct State {
        var queue: [UnownedJob] = []
        var closed = false
        var sleeping = false
    }

    private let state = Mutex(State())
    private let wake = DispatchSemaphore(value: 0)

    /// Starts the thread, named `name`.
    init(name: String) {
        let thread = Thread { [self] in run() }
        thread.name = name
        thread.start()
    }

    func enqueue(_ job: consuming ExecutorJob) {
        let unowned = UnownedJob(job)
        let (accepted, wakeUp) = state.withLock { state -> (Bool, Bool) in
            if state.closed { return (false, false) }
            state.queue.append(unowned)
            defer { state.sleeping = false }
            return (true, state.sleeping)
        }
        if !accepted {
            globalConcurrentExecutor.enqueue(unowned)
        } else if wakeUp {
            wake.signal()
        }
    }

    /// From now on jobs run on the global executor; the thread ends once it has run what it holds.
    func close() {
        let sleeping = state.withLock { state -> Bool in
            state.closed = true
            defer { state.sleeping = false }
            return state.sleeping
        }
        if sleeping { wake.signal() }
    }

    private func run() {
        while true {
            let batch = state.withLock { state -> [UnownedJob]? in
                if state.queue.isEmpty {
                    if state.closed { return nil }
                    state.sleeping = true
                    return []
                }
                defer { state.queue.removeAll(keepingCapacity: true) }
                return state.queue
            }
            guard let batch else { return }
            if batch.isEmpty {
                wake.wait()
                continue
            }
            for job in batch { job.runSynchronously(on: asUnownedTaskExecutor()) }
        }
    }
}
