import Foundation
import LifelineSupport
import Synchronization

/// One thread per process that looks at the socket executors every 10 ms while jobs run on them
/// (every 100 ms after a quiet second) and hands a held loop to a new thread
/// (``SocketExecutor/takeOverIfHeld(now:limit:)``). A job costs it one relaxed atomic store, never
/// a wake-up.
final class LoopMonitor: Sendable {
    static let shared = LoopMonitor()

    private let watched = Mutex<(executors: [ObjectIdentifier: SocketExecutor], started: Bool)>(([:], false))
    private let active = Atomic<Bool>(false)

    /// Looks after `executor` until it closes.
    func watch(_ executor: SocketExecutor) {
        let start = watched.withLock { watched -> Bool in
            watched.executors[ObjectIdentifier(executor)] = executor
            defer { watched.started = true }
            return !watched.started
        }
        if start {
            let thread = Thread { [self] in run() }
            thread.name = "ll-monitor"
            thread.start()
        }
    }

    func unwatch(_ executor: SocketExecutor) {
        _ = watched.withLock { $0.executors.removeValue(forKey: ObjectIdentifier(executor)) }
    }

    /// A job started on some socket thread.
    func noteActivity() {
        if !active.load(ordering: .relaxed) { active.store(true, ordering: .relaxed) }
    }

    private func run() {
        ThreadName.set("ll-monitor")
        let limit = UInt64(SocketExecutor.holdLimit.wholeNanoseconds)
        var quietLooks = 0
        while true {
            quietLooks = active.exchange(false, ordering: .relaxed) ? 0 : quietLooks + 1
            usleep(quietLooks > 100 ? 100_000 : 10_000)
            let executors = watched.withLock { Array($0.executors.values) }
            let now = SystemClock.monotonicNanoseconds()
            for executor in executors { executor.takeOverIfHeld(now: now, limit: limit) }
        }
    }
}
