import Foundation
import Lifeline
import LifelineBroker
import LifelineProtocol
import LifelineSupport
import Synchronization

/// One process `lifeline up` keeps running: how to start it, its restart policy and history, and
/// its current run. Its stdout and stderr go, line by line, to `RUN/NAME.log` (stdout lines
/// timestamped); a `READY ` line on stdout means it is up (a group's member: `READY ` or `STANDBY `).
final class SupervisedChild: @unchecked Sendable {
    // Mutable state is only touched on the supervisor's queue.
    let name: String
    let executable: URL
    let arguments: [String]
    let restart: Topology.Restart
    let logPath: String
    var tracker: RestartTracker
    var process: Process?
    var startedAt: UInt64 = 0
    var gaveUp = false
    /// Stopped on purpose (scaled down): not restarted.
    var retired = false
    /// Exited and not restarted (its policy said so, or the supervisor gave up on it).
    var stopped = false
    /// The line that said it was ready, for this run (nil until then), and whether the run's
    /// output ended without it.
    private let readiness = Mutex<(line: String?, ended: Bool, waiters: [DispatchSemaphore])>(
        (nil, false, []))

    init(
        name: String, executable: URL, arguments: [String], restart: Topology.Restart, logPath: String,
        tracker: RestartTracker
    ) {
        self.name = name
        self.executable = executable
        self.arguments = arguments
        self.restart = restart
        self.logPath = logPath
        self.tracker = tracker
    }

    /// Starts a new run; `exited` is called (on any thread) with its status and whether a signal
    /// ended it.
    func launch(arguments override: [String]? = nil, exited: @escaping @Sendable (Int32, Bool) -> Void) throws
    {
        readiness.withLock {
            $0.line = nil
            $0.ended = false
        }
        let process = Process()
        process.executableURL = executable
        process.arguments = override ?? arguments
        let out = Pipe()
        let err = Pipe()
        process.standardOutput = out
        process.standardError = err
        process.standardInput = FileHandle.nullDevice
        process.terminationHandler = { finished in
            exited(finished.terminationStatus, finished.terminationReason == .uncaughtSignal)
        }
        if !FileManager.default.fileExists(atPath: logPath) {
            _ = FileManager.default.createFile(atPath: logPath, contents: nil)
        }
        let log = try FileHandle(forWritingTo: URL(fileURLWithPath: logPath))
        log.seekToEndOfFile()
        try process.run()
        startedAt = SystemClock.monotonicNanoseconds()
        self.process = process
        copy(out.fileHandleForReading, to: log, stamped: true)
        copy(err.fileHandleForReading, to: log, stamped: false)
    }

    /// How a wait for a run's READY line ended.
    enum Readiness: Equatable {
        case ready(String)
        /// The run's output ended without it: the process exited.
        case exited
        case timedOut
    }

    /// Waits up to `seconds` for this run's READY line; nil when it did not come.
    func waitUntilReady(seconds: Double) -> String? {
        if case .ready(let line) = waitForReadiness(seconds: seconds) { return line }
        return nil
    }

    /// Waits up to `seconds` for this run's READY line, or for the run to end without it.
    func waitForReadiness(seconds: Double) -> Readiness {
        let semaphore = DispatchSemaphore(value: 0)
        let waiting = readiness.withLock { state -> Bool in
            if state.line == nil && !state.ended { state.waiters.append(semaphore) }
            return state.line == nil && !state.ended
        }
        if waiting { _ = semaphore.wait(timeout: .now() + seconds) }
        return readiness.withLock { state in
            if let line = state.line { return .ready(line) }
            return state.ended ? .exited : .timedOut
        }
    }

    /// True while the current run has not exited.
    var isRunning: Bool { process?.isRunning ?? false }

    /// The process id of the current run (0 when none).
    var pid: Int32 { process?.processIdentifier ?? 0 }

    private func copy(_ handle: FileHandle, to log: FileHandle, stamped: Bool) {
        let thread = Thread { [self] in
            var pending = Data()
            while true {
                let chunk = handle.availableData
                if chunk.isEmpty { break }
                pending.append(chunk)
                while let newline = pending.firstIndex(of: 0x0A) {
                    let line = String(decoding: pending[pending.startIndex..<newline], as: UTF8.self)
                    pending.removeSubrange(pending.startIndex...newline)
                    let text = stamped ? "\(Console.timestamp()) \(name): \(line)\n" : line + "\n"
                    log.write(Data(text.utf8))
                    if stamped && (line.hasPrefix("READY ") || line.hasPrefix("STANDBY ")) { ready(line) }
                }
            }
            // A run that ends without READY wakes its waiters too.
            ready(nil)
        }
        thread.start()
    }

    private func ready(_ line: String?) {
        let waiters = readiness.withLock { state -> [DispatchSemaphore] in
            if let line, state.line == nil { state.line = line }
            if line == nil { state.ended = true }
            defer { state.waiters.removeAll() }
            return state.waiters
        }
        for waiter in waiters { waiter.signal() }
    }
}
