import Foundation
import Synchronization

/// Why a wait in a test ended without what it waited for.
struct HarnessError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

/// A built executable run as a child process, its stdout and stderr read line by line on their own
/// threads, so tests can wait for a line (a readiness barrier) with a deadline. The process is killed
/// when the value is released.
final class ChildProcess: @unchecked Sendable {
    private struct Waiter {
        let id: Int
        let stream: Stream
        let predicate: @Sendable (String) -> Bool
        let continuation: CheckedContinuation<String, any Error>
    }

    enum Stream: Sendable { case stdout, stderr }

    private struct State {
        var stdout: [String] = []
        var stderr: [String] = []
        var waiters: [Waiter] = []
        var nextID = 0
        var closed: Set<Int> = []
    }

    let name: String
    let process = Process()
    private let state = Mutex(State())
    private final class ExitState: Sendable {
        let value = Mutex<(status: Int32?, waiters: [CheckedContinuation<Int32, Never>])>((nil, []))
    }
    private let exitState = ExitState()
    /// Held around every `Process.run` of the tests (see below).
    static let spawning = Mutex<Void>(())

    /// Starts `executable` (a product of this package) with `arguments` and extra `environment`.
    init(_ executable: String, _ arguments: [String] = [], environment: [String: String] = [:]) throws {
        name = executable
        process.executableURL =
            executable.hasPrefix("/") ? URL(fileURLWithPath: executable) : Executables.url(executable)
        process.arguments = arguments
        process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        let out = Pipe()
        let err = Pipe()
        process.standardOutput = out
        process.standardError = err
        process.standardInput = FileHandle.nullDevice
        process.terminationHandler = { [exitState] process in
            let waiters = exitState.value.withLock { state in
                state.status = process.terminationStatus
                defer { state.waiters.removeAll() }
                return state.waiters
            }
            for waiter in waiters { waiter.resume(returning: process.terminationStatus) }
        }
        // Foundation's Process.run is not safe to call from several threads at once on Linux (two
        // crashes in memmove inside it while suites spawned children in parallel): one at a time.
        try Self.spawning.withLock { _ in try process.run() }
        read(out.fileHandleForReading, into: .stdout)
        read(err.fileHandleForReading, into: .stderr)
    }

    deinit { kill() }

    var pid: Int32 { process.processIdentifier }

    private func read(_ handle: FileHandle, into stream: Stream) {
        let thread = Thread { [weak self] in
            var pending = Data()
            while true {
                let chunk = handle.availableData
                if chunk.isEmpty { break }
                pending.append(chunk)
                while let newline = pending.firstIndex(of: 0x0A) {
                    let line = String(decoding: pending[pending.startIndex..<newline], as: UTF8.self)
                    pending.removeSubrange(pending.startIndex...newline)
                    self?.append(line, to: stream)
                }
            }
            self?.close(stream)
        }
        thread.start()
    }

    private func append(_ line: String, to stream: Stream) {
        let ready = state.withLock { state -> [Waiter] in
            if stream == .stdout { state.stdout.append(line) } else { state.stderr.append(line) }
            let matched = state.waiters.filter { $0.stream == stream && $0.predicate(line) }
            state.waiters.removeAll { waiter in matched.contains { $0.id == waiter.id } }
            return matched
        }
        for waiter in ready { waiter.continuation.resume(returning: line) }
    }

    private func close(_ stream: Stream) {
        let orphans = state.withLock { state -> [Waiter] in
            state.closed.insert(stream == .stdout ? 1 : 2)
            let orphans = state.waiters.filter { $0.stream == stream }
            state.waiters.removeAll { $0.stream == stream }
            return orphans
        }
        for waiter in orphans {
            waiter.continuation.resume(
                throwing: HarnessError("\(name) closed its \(stream) before the expected line"))
        }
    }

    /// Every line written so far to `stream`.
    func lines(_ stream: Stream = .stdout) -> [String] {
        state.withLock { stream == .stdout ? $0.stdout : $0.stderr }
    }

    /// The first line of `stream` (already written or still to come) that satisfies `predicate`;
    /// throws when `seconds` pass first or the stream closes.
    @discardableResult
    func waitForLine(
        _ stream: Stream = .stdout, seconds: Double = 10,
        where predicate: @escaping @Sendable (String) -> Bool
    ) async throws -> String {
        let id = state.withLock { state -> Int in
            state.nextID += 1
            return state.nextID
        }
        let deadlineTask = Task { [weak self] in
            try await Task.sleep(for: .seconds(seconds))  // the wait's deadline timer
            self?.expire(id, after: seconds)
        }
        defer { deadlineTask.cancel() }
        return try await withCheckedThrowingContinuation { continuation in
            let outcome = state.withLock { state -> Result<String, HarnessError>? in
                if let line = (stream == .stdout ? state.stdout : state.stderr).first(where: predicate) {
                    return .success(line)
                }
                if state.closed.contains(stream == .stdout ? 1 : 2) {
                    return .failure(HarnessError("\(name) closed its \(stream)"))
                }
                state.waiters.append(
                    Waiter(id: id, stream: stream, predicate: predicate, continuation: continuation))
                return nil
            }
            if let outcome { continuation.resume(with: outcome.mapError { $0 as any Error }) }
        }
    }

    /// Waits for a line starting with `prefix`.
    @discardableResult
    func waitForLine(startingWith prefix: String, _ stream: Stream = .stdout, seconds: Double = 10)
        async throws -> String
    {
        try await waitForLine(stream, seconds: seconds) { $0.hasPrefix(prefix) }
    }

    private func expire(_ id: Int, after seconds: Double) {
        let waiter = state.withLock { state -> Waiter? in
            guard let index = state.waiters.firstIndex(where: { $0.id == id }) else { return nil }
            return state.waiters.remove(at: index)
        }
        let tail = (lines(.stdout).suffix(5) + lines(.stderr).suffix(5)).joined(separator: "\n  ")
        waiter?.continuation.resume(
            throwing: HarnessError("\(name): no matching line within \(seconds) s; last output:\n  \(tail)"))
    }

    /// Sends `signal` (default SIGKILL) if the process still runs.
    func kill(_ signal: Int32 = SIGKILL) {
        if process.isRunning { Foundation.kill(process.processIdentifier, signal) }
    }

    /// The exit status, waiting up to `seconds` (then killing the process and failing).
    func waitForExit(seconds: Double = 10) async throws -> Int32 {
        let timedOut = Atomic<Bool>(false)
        let deadlineTask = Task { [weak self] in
            try await Task.sleep(for: .seconds(seconds))  // the exit's deadline timer
            timedOut.store(true, ordering: .sequentiallyConsistent)
            self?.kill()
        }
        defer { deadlineTask.cancel() }
        let status = await withCheckedContinuation { continuation in
            let known = exitState.value.withLock { state -> Int32? in
                if state.status == nil { state.waiters.append(continuation) }
                return state.status
            }
            if let known { continuation.resume(returning: known) }
        }
        if timedOut.load(ordering: .sequentiallyConsistent) {
            throw HarnessError("\(name) did not exit within \(seconds) s")
        }
        return status
    }

    /// Waits until both output streams have been read to their end.
    func waitForOutputToEnd(seconds: Double = 5) async {
        for stream in [Stream.stdout, .stderr] {
            _ = try? await waitForLine(stream, seconds: seconds) { _ in false }
        }
    }
}

/// Where the package's executables were built: next to the test bundle.
enum Executables {
    static let directory: URL = {
        if let override = ProcessInfo.processInfo.environment["LIFELINE_BIN_DIR"] {
            return URL(fileURLWithPath: override)
        }
        return URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath().deletingLastPathComponent()
    }()

    static func url(_ name: String) -> URL { directory.appendingPathComponent(name) }
}
