import Foundation
import LifelineProtocol
import LifelineSupport
import Synchronization

/// Runs the console's actions as the CLI runs them: `lifeline publish|call|apps|dispatch|boot ARGS`,
/// as a child process with the console's broker and keys, so an action is validated, refused and
/// explained exactly as on the command line.
struct ConsoleActions: Sendable {
    static let commands = ["publish", "call", "apps", "dispatch", "boot"]
    /// Options an action may not give: the console's broker and keys are the ones used.
    static let reserved = ["--broker", "--key", "--broker-key"]
    /// Options that write files: no action of the page writes on the console's host.
    static let writing = ["--svg"]
    /// The longest an action may run (an `apps` change waits for callbacks up to 60 s).
    static let limitSeconds = 90.0
    /// How many actions may run at once (each is a process).
    static let maximumRunning = 8
    private static let running = Mutex(0)

    /// Runs `arguments` unless ``maximumRunning`` actions run already; stops it when the client
    /// connected on `client` hangs up first.
    /// - Throws: ``HTTPError`` 429 when they do.
    func runIfRoom(_ arguments: [String], for client: Int32? = nil) throws(HTTPError) -> Outcome {
        let admitted = Self.running.withLock { count -> Bool in
            guard count < Self.maximumRunning else { return false }
            count += 1
            return true
        }
        guard admitted else {
            throw HTTPError(429, "\(Self.maximumRunning) actions are running; try again when one has ended")
        }
        defer { Self.running.withLock { $0 -= 1 } }
        return run(arguments, for: client)
    }

    /// The `lifeline` executable.
    let executable: String
    /// The console's broker and keys, as the CLI reads them from the environment.
    let environment: [String: String]

    /// What one action printed and its exit status.
    struct Outcome: Sendable {
        var status: Int32
        var output: String
        var error: String

        var json: JSONValue {
            ["status": .int(Int64(status)), "output": .string(output), "error": .string(error)]
        }
    }

    /// The arguments of an action asked as `{"command": "publish", "line": "didBecomeActive"}`.
    /// - Throws: ``HTTPError`` (400) naming what is wrong: not JSON, an unknown command, an open
    ///   quote, or a reserved option.
    static func arguments(fromBody body: [UInt8]) throws(HTTPError) -> [String] {
        let json: JSONValue
        do { json = try JSONParser.parse(body) } catch {
            throw HTTPError(400, "an action is a JSON object {\"command\": …, \"line\": …}: \(error)")
        }
        guard case .object = json else {
            throw HTTPError(
                400, "an action is a JSON object {\"command\": …, \"line\": …}, not \(json.typeName)")
        }
        if let line = json["line"], line.stringValue == nil {
            throw HTTPError(
                400, "an action's 'line' is a string of the command's arguments, not \(line.typeName)")
        }
        guard let command = json["command"]?.stringValue, commands.contains(command) else {
            throw HTTPError(
                400,
                "unknown action '\(json["command"]?.stringValue ?? "")'; actions: \(commands.joined(separator: ", "))"
            )
        }
        let words: [String]
        do { words = try ShellWords.split(json["line"]?.stringValue ?? "") } catch {
            throw HTTPError(400, error.message)
        }
        for word in words {
            // A control character (a NUL ends an argument in the child's argv) would let a word pass
            // these checks as one thing and reach the CLI as another.
            if word.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7F }) {
                throw HTTPError(400, "an action's words may not hold control characters")
            }
            let option = word.split(separator: "=", maxSplits: 1).first.map(String.init) ?? word
            if reserved.contains(option) {
                throw HTTPError(400, "\(option) is the console's own: an action uses its broker and keys")
            }
            if writing.contains(option) {
                throw HTTPError(
                    400,
                    "\(option) writes a file on the console's host, which no action may do: the page shows the boot's timeline itself (/api/boot.svg)"
                )
            }
        }
        return [command] + words
    }

    private static let spawning = Mutex<Void>(())

    /// Runs `lifeline ARGUMENTS` and waits for it: at most ``limitSeconds``, and only while the
    /// client connected on `client` is (a page closed, a request given up: its place is freed).
    func run(_ arguments: [String], for client: Int32? = nil) -> Outcome {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        let output = Pipe()
        let error = Pipe()
        process.standardOutput = output
        process.standardError = error
        process.standardInput = FileHandle.nullDevice
        do {
            // Foundation's Process.run is not safe from several threads at once on Linux.
            try Self.spawning.withLock { _ in try process.run() }
        } catch {
            return Outcome(status: 1, output: "", error: "could not start \(executable): \(error)")
        }
        let outputText = Self.read(output)
        let errorText = Self.read(error)
        // SIGKILL: an action is a client with nothing to tidy, and a SIGTERM the console's own
        // signal mask blocks (inherited from whatever started it) would be blocked in the child too.
        let stop = { [process] in if process.isRunning { kill(process.processIdentifier, SIGKILL) } }
        let limit = DispatchWorkItem { stop() }
        DispatchQueue.global().asyncAfter(deadline: .now() + Self.limitSeconds, execute: limit)
        var abandoned = false
        if let client {
            while process.isRunning && !abandoned {
                abandoned = Self.hungUp(client, waitingMilliseconds: 100)
                if abandoned { stop() }
            }
        }
        process.waitUntilExit()
        limit.cancel()
        var errorLines = errorText()
        if abandoned {
            errorLines += "the action was stopped: its client hung up\n"
        } else if process.terminationReason == .uncaughtSignal {
            errorLines += "the action was stopped after \(Int(Self.limitSeconds)) s\n"
        }
        return Outcome(status: process.terminationStatus, output: outputText(), error: errorLines)
    }

    /// Reads what `pipe` carries to its end on a thread of its own; the function returned waits for
    /// that end and gives the text.
    private static func read(_ pipe: Pipe) -> () -> String {
        let text = Mutex("")
        let done = DispatchSemaphore(value: 0)
        Thread {
            let data = pipe.fileHandleForReading.readDataToEndOfFile()
            text.withLock { $0 = String(decoding: data, as: UTF8.self) }
            done.signal()
        }.start()
        return {
            done.wait()
            return text.withLock { $0 }
        }
    }

    /// Whether the client on `descriptor` closed its connection (or its sending side: it sent all it
    /// will), waiting up to `waitingMilliseconds` for it to.
    private static func hungUp(_ descriptor: Int32, waitingMilliseconds: Int32) -> Bool {
        // Linux's POLLRDHUP (Glibc declares it only under _GNU_SOURCE).
        let peerClosed: Int16 = 0x2000
        var watched = pollfd(fd: descriptor, events: peerClosed, revents: 0)
        guard poll(&watched, 1, waitingMilliseconds) > 0 else { return false }
        let ended = peerClosed | Int16(POLLHUP) | Int16(POLLERR)
        return watched.revents & ended != 0
    }
}
