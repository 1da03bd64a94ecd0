import Foundation
import Lifeline
import LifelineSupport

/// Stopping processes as `lifeline up` and `lifeline down` do: SIGTERM to each and to its process
/// group (each child is started in a group of its own, so a wrapper script's children go with it),
/// then SIGKILL to whatever of them still runs after 5 s, said on the log as `who`.
enum Termination {
    static func stop(_ processes: [(name: String, pid: Int32)], as who: String, isRunning: (Int32) -> Bool) {
        func running(_ pid: Int32) -> Bool { isRunning(pid) || kill(-pid, 0) == 0 }
        for process in processes { signal(process.pid, SIGTERM) }
        let deadline = SystemClock.monotonicNanoseconds() + 5_000_000_000
        while processes.contains(where: { running($0.pid) }), SystemClock.monotonicNanoseconds() < deadline {
            usleep(5000)
        }
        for process in processes where running(process.pid) {
            Console.log(who, "\(process.name) did not stop within 5 s; killing it")
            signal(process.pid, SIGKILL)
        }
    }

    /// Sends `number` to `pid` and to the process group it leads (none when it leads none).
    private static func signal(_ pid: Int32, _ number: Int32) {
        kill(-pid, number)
        kill(pid, number)
    }
}
