import Foundation
import Lifeline
import LifelineSupport

/// Stopping processes as `lifeline up` and `lifeline down` do: SIGTERM to each, then SIGKILL to any
/// still running after 5 s, said on the log as `who`.
enum Termination {
    static func stop(_ processes: [(name: String, pid: Int32)], as who: String, isRunning: (Int32) -> Bool) {
        for process in processes { kill(process.pid, SIGTERM) }
        let deadline = SystemClock.monotonicNanoseconds() + 5_000_000_000
        while processes.contains(where: { isRunning($0.pid) }), SystemClock.monotonicNanoseconds() < deadline
        {
            usleep(5000)
        }
        for process in processes where isRunning(process.pid) {
            Console.log(who, "\(process.name) did not stop within 5 s; killing it")
            kill(process.pid, SIGKILL)
        }
    }
}
