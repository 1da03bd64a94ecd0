import Foundation
import Lifeline
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
    func waitForReady(seconds: Double = 20) throws -> [String: String] {
        let deadline = SystemClock.monotonicNanoseconds() + UInt64(seconds * 1e9)
        while SystemClock.monotonicNanoseconds() < deadline {
            if let line = lines.withLock({ $0.first { $0.hasPrefix("READY") } }) {
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

    /// CPU time (user + system, all threads) used so far, in microseconds.
    var cpuMicroseconds: Double {
        guard
            let text = try? String(
                contentsOfFile: "/proc/\(process.processIdentifier)/stat", encoding: .utf8),
            let close = text.lastIndex(of: ")")
        else { return 0 }
        let fields = text[text.index(after: close)...].split(separator: " ")
        guard fields.count > 13, let user = Double(fields[11]), let system = Double(fields[12]) else {
            return 0
        }
        return (user + system) / Double(sysconf(Int32(_SC_CLK_TCK))) * 1_000_000
    }

    func stop() {
        guard process.isRunning else { return }
        kill(process.processIdentifier, SIGTERM)
        for _ in 0..<200 where process.isRunning { usleep(10_000) }
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
    }
}

struct BenchError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
