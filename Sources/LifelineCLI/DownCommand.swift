import Foundation
import Lifeline
import LifelineProtocol
import LifelineSupport

/// `lifeline down`: stops what `lifeline up` started.
enum DownCommand: CLICommand {
    static let name = "down"
    static let summary = "stop what 'lifeline up' started (services in reverse order, then the broker)"
    static let usage = """
        usage: lifeline down [--run-dir DIR]

        Sends SIGTERM to the supervisor of DIR (default run/) and waits until it has stopped the
        services, in reverse start order, and then the broker. Prints how long it took. When the
        supervisor is gone (killed) but processes it started still run, stops them itself.
        """
    static let runDirectory = CommandLineOption.value(
        "--run-dir", "DIR", help: "the supervisor's run directory (default run/)")
    static let options = [runDirectory]

    static func run(_ arguments: inout CommandLineArguments) throws -> Int32 {
        let runDirectory = URL(fileURLWithPath: try arguments.path(Self.runDirectory) ?? "run")
        try arguments.finish()
        let started = SystemClock.monotonicNanoseconds()
        guard let pid = runningSupervisor(runDirectory.appendingPathComponent("up.pid")) else {
            // A supervisor that died without stopping its processes left them running.
            let leftovers = LeftoverProcesses(in: runDirectory)
            if leftovers.isEmpty {
                Console.error("nothing is up in \(runDirectory.path)")
                return 0
            }
            leftovers.stop()
            Console.out(
                "the supervisor of \(runDirectory.path) had stopped; stopped what it left running, \(leftovers.description), in \(Supervisor.seconds(SystemClock.monotonicNanoseconds() - started))"
            )
            return 0
        }
        kill(pid, SIGTERM)
        let deadline = started + 30_000_000_000
        while isAlive(pid), SystemClock.monotonicNanoseconds() < deadline { usleep(10_000) }
        if isAlive(pid) {
            throw LifelineError(.timeout, "the supervisor (pid \(pid)) did not stop within 30 s")
        }
        Console.out("down in \(Supervisor.seconds(SystemClock.monotonicNanoseconds() - started))")
        return 0
    }

    /// The pid in `pidFile` when that process still runs.
    static func runningSupervisor(_ pidFile: URL) -> Int32? {
        guard let text = try? String(contentsOf: pidFile, encoding: .utf8),
            let pid = Int32(text.trimmingCharacters(in: .whitespacesAndNewlines)), pid > 0, isAlive(pid)
        else { return nil }
        return pid
    }

    /// True while `pid` runs (a zombie waiting to be reaped counts as gone).
    static func isAlive(_ pid: Int32) -> Bool {
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8) else {
            return false
        }
        guard let close = stat.lastIndex(of: ")") else { return false }
        let state = stat[stat.index(after: close)...].trimmingCharacters(in: .whitespaces).first
        return state != "Z" && state != "X"
    }
}
