import Foundation
import Glibc
import Lifeline
import LifelineCLI
import LifelineProtocol
import LifelineSupport
import Synchronization

/// `lifeline-bench replicas`: calls per second of a CPU-bound method (`lifeline-probe`'s `compute`,
/// which runs one call at a time per process, as a single-threaded service does) served by one
/// instance and by two, in alternate rounds on the same broker, with the same callers.
enum Replicas {
    struct Round {
        var instances: Int
        var callsPerSecond: Double
    }

    /// Runs `rounds` rounds of each (1, 2, 2, 1, …), each `seconds` long with `callers` threads
    /// calling `compute {"ms": work}` one after another; returns every round.
    static func run(rounds: Int, seconds: Double, callers: Int, work: Int) throws -> [Round] {
        let binaries = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath()
            .deletingLastPathComponent()
        let logs = URL(fileURLWithPath: NSTemporaryDirectory()).appendingPathComponent(
            "lifeline-replicas-\(getpid())")
        try FileManager.default.createDirectory(at: logs, withIntermediateDirectories: true)
        let broker = try Child(
            "broker", executable: binaries.appendingPathComponent("lifeline"),
            arguments: ["broker", "--control", "tcp://127.0.0.1:*", "--bus", "tcp://127.0.0.1:*"],
            logDirectory: logs)
        defer { broker.stop() }
        guard let control = try broker.waitForReady()["control"] else {
            throw BenchError("no control endpoint")
        }
        func instance(_ number: Int) throws -> Child {
            let child = try Child(
                "crunch-\(number)", executable: binaries.appendingPathComponent("lifeline-probe"),
                arguments: [
                    "--broker", control, "--name", "crunch", "--replicable", "--idempotent", "compute",
                ],
                logDirectory: logs)
            _ = try child.waitForReady()
            return child
        }
        let first = try instance(1)
        defer { first.stop() }
        var results: [Round] = []
        var second: Child?
        defer { second?.stop() }
        for round in 0..<(2 * rounds) {
            let wanted = [1, 2, 2, 1][round % 4]
            if wanted == 2, second == nil { second = try instance(2) }
            if wanted == 1, let running = second {
                running.stop()
                second = nil
                // The stopped instance unregisters; the next calls go to the first only.
                usleep(200_000)
            }
            let calls = try measure(control: control, seconds: seconds, callers: callers, work: work)
            results.append(Round(instances: wanted, callsPerSecond: calls))
            Console.out(
                String(
                    format: "round %2d: %d instance%@ %8.1f calls/s", round + 1, wanted,
                    wanted == 1 ? " " : "s", calls))
        }
        return results
    }

    /// Calls per second that `callers` threads get for `seconds`.
    private static func measure(control: String, seconds: Double, callers: Int, work: Int) throws -> Double {
        let answered = Atomic<Int>(0)
        let failed = Mutex<String?>(nil)
        let deadline = SystemClock.monotonicNanoseconds() + UInt64(seconds * 1e9)
        let body = Array(#"{"ms":\#(work)}"#.utf8)
        let threads = (0..<callers).map { _ in
            Thread {
                do {
                    let client = try BlockingClient(broker: control, credentials: nil)
                    while SystemClock.monotonicNanoseconds() < deadline {
                        let reply = try client.call(
                            ServiceCall(
                                service: "crunch", method: "compute", timeoutMilliseconds: 10_000, body: body)
                        )
                        guard reply.status.isSuccess else {
                            throw BenchError("compute answered \(reply.status)")
                        }
                        answered.add(1, ordering: .relaxed)
                    }
                } catch {
                    failed.withLock { $0 = "\(error)" }
                }
            }
        }
        let started = SystemClock.monotonicNanoseconds()
        for thread in threads { thread.start() }
        while SystemClock.monotonicNanoseconds() < deadline + 2_000_000_000 { usleep(50_000) }
        if let failure = failed.withLock({ $0 }) { throw BenchError("a caller failed: \(failure)") }
        let elapsed = Double(SystemClock.monotonicNanoseconds() - started) / 1e9
        return Double(answered.load(ordering: .relaxed)) / min(elapsed, seconds)
    }

    /// The medians of each and their ratio, as the run's last lines.
    static func summary(_ rounds: [Round]) -> String {
        func median(_ values: [Double]) -> Double {
            let sorted = values.sorted()
            return sorted.isEmpty ? 0 : sorted[sorted.count / 2]
        }
        let one = median(rounds.filter { $0.instances == 1 }.map(\.callsPerSecond))
        let two = median(rounds.filter { $0.instances == 2 }.map(\.callsPerSecond))
        return String(
            format: "median: 1 instance %.1f calls/s, 2 instances %.1f calls/s: %.2f×", one, two,
            one == 0 ? 0 : two / one)
    }
}
