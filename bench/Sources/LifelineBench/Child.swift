import Foundation
import Lifeline
import LifelineProtocol
import LifelineSupport
import Synchronization

/// A process the driver started: stdout read line by line on a thread, stderr into a log file.
final class Child: @unchecked Sendable {
    let name: String
    let process = Process()
    private let lines = Mutex<[String]>([])

    init(_ name: String, executable: URL, arguments: [String], logDirectory: URL) throws {
        self.name = name
        process.executableURL = executable
        process.arguments = arguments
        let out = Pipe()
        process.standardOutput = out
        let log = logDirectory.appendingPathComponent("\(name).log")
        _ = FileManager.default.createFile(atPath: log.path, contents: nil)
        process.standardError = try FileHandle(forWritingTo: log)
        process.standardInput = FileHandle.nullDevice
        try process.run()
        let handle = out.fileHandleForReading
        let thread = Thread { [weak self] in
            var pending = Data()
            while true {
                let chunk = handle.availableData
                if chunk.isEmpty { return }
                pending.append(chunk)
                while let newline = pending.firstIndex(of: 0x0A) {
                    let line = String(decoding: pending[pending.startIndex..<newline], as: UTF8.self)
                    pending.removeSubrange(pending.startIndex...newline)
                    self?.lines.withLock { $0.append(line) }
                }
            }
        }
        thread.start()
    }

    /// Blocks (the driver is a plain thread) until a `READY` line arrives; returns its fields.
    /// A broker group's member says `STANDBY` (pass it in `prefixes`) when it does not lead.
    func waitForReady(seconds: Double = 20, prefixes: [String] = ["READY"]) throws -> [String: String] {
        let deadline = SystemClock.monotonicNanoseconds() + UInt64(seconds * 1e9)
        while SystemClock.monotonicNanoseconds() < deadline {
            if let line = lines.withLock({ $0.first { line in prefixes.contains { line.hasPrefix($0) } } }) {
                var fields: [String: String] = [:]
                for field in line.split(separator: " ").dropFirst() {
                    let parts = field.split(separator: "=", maxSplits: 1)
                    if parts.count == 2 { fields[String(parts[0])] = String(parts[1]) }
                }
                return fields
            }
            guard process.isRunning else { break }
            usleep(2000)
        }
        throw BenchError("\(name) did not print READY within \(seconds) s (see its log)")
    }

    /// CPU time (user + system, all threads, ended ones included) used so far, in microseconds: the
    /// process's CPU clock (`clock_getcpuclockid`), exact to the nanosecond. (`/proc/PID/stat`
    /// counts in 10 ms clock ticks: over a round of a few hundred milliseconds per process that
    /// quantization moved the CPU ratios by ±0.1×.)
    var cpuMicroseconds: Double {
        var clock = clockid_t()
        var time = timespec()
        guard clock_getcpuclockid(process.processIdentifier, &clock) == 0, clock_gettime(clock, &time) == 0
        else { return 0 }
        return Double(time.tv_sec) * 1_000_000 + Double(time.tv_nsec) / 1000
    }

    func stop() {
        guard process.isRunning else { return }
        kill(process.processIdentifier, SIGTERM)
        for _ in 0..<200 where process.isRunning { usleep(10_000) }
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
    }
}

extension [Child] {
    /// Waits until each member of a broker group says READY (the leader) or STANDBY; returns every
    /// member's control endpoint and the leader's.
    /// - Throws: ``BenchError`` when a member does not start or none leads.
    func groupEndpoints() throws -> (controls: [String], leader: String) {
        var controls: [String] = []
        var leader: String?
        for member in self {
            let fields = try member.waitForReady(seconds: 30, prefixes: ["READY", "STANDBY"])
            controls.append(fields["control"] ?? "")
            if fields["bus"] != nil { leader = fields["control"] }
        }
        guard let leader else { throw BenchError("no member of the group leads") }
        return (controls, leader)
    }
}

struct BenchError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
