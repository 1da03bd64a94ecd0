import Foundation
import Lifeline
import LifelineBroker
import LifelineProtocol
import LifelineSupport

/// `lifeline up`: the broker and a topology's services, supervised.
enum UpCommand: CLICommand {
    static let name = "up"
    static let summary = "start the broker and a topology's services, and keep them running"
    static let usage = """
        usage: lifeline up [--topology FILE] [--run-dir DIR] [--detach]

        Starts the broker, then the topology's services in dependency order ('after'; a layer once
        the one before has registered), and supervises them: a service that exits is restarted as
        its 'restart' says (always, on-failure — the default —, never) after an exponential backoff
        with jitter (250 ms … 8 s); beyond the topology's restart intensity ("supervisor":
        {"restarts": 5, "seconds": 10}) it gives up on that service, says so, and keeps the rest.
        Prints 'UP control=EP services=N pid=P' once everything is up (and tells systemd READY=1).
        SIGTERM or SIGINT (or 'lifeline down') stops the services in reverse start order, in
        parallel where the order allows, then the broker. Logs: DIR/NAME.log; pids: DIR/NAME.pid.

        A service with "replicas": N runs as N processes (NAME, NAME@2, … NAME@N: logs and pids
        each), each restarted on its own; its code must make it replicable. 'lifeline scale NAME N'
        changes N while everything runs.

        A topology with a "group" (see deploy/group.json) runs every member of that broker group
        instead of one broker (logs DIR/broker-ID.log, state DIR/state-ID; etcd must already run),
        each restarted whenever it exits; it is up once one member leads and the others hold its
        copy, and the services are given the members' list (UP control=A,B,C).

        The logging options are passed on to the broker and the services.
        """
    static let topology = CommandLineOption.value(
        "--topology", "FILE", help: "the processes to start (default deploy/topology.json)")
    static let runDirectory = CommandLineOption.value(
        "--run-dir", "DIR", help: "logs, pids and the broker's state (default run/)")
    static let detach = CommandLineOption.flag(
        "--detach", help: "run in the background (its own log: DIR/up.log); return once it is up")
    static let options = [topology, runDirectory, detach] + Console.options

    static func run(_ arguments: inout CommandLineArguments) throws -> Int32 {
        let topologyPath = try arguments.option(Self.topology) ?? "deploy/topology.json"
        let runDirectory = URL(fileURLWithPath: try arguments.path(Self.runDirectory) ?? "run")
        let detach = arguments.flag(Self.detach)
        try Console.configure(parsing: &arguments)
        try arguments.finish()
        guard let data = FileManager.default.contents(atPath: topologyPath) else {
            throw UsageError("cannot read the topology \(topologyPath)")
        }
        let topology: Topology
        do {
            topology = try Topology.parse(Array(data))
        } catch let error as ProtocolError {
            throw UsageError("\(topologyPath): \(error.message)")
        } catch {
            throw UsageError("\(topologyPath) is not JSON: \(error)")
        }
        try Directories.create(runDirectory.path, what: "the run directory")
        // Held for the supervisor's life: two at once on one run directory would each take the other's
        // processes for their own. (A launcher only looks: its supervisor takes it.)
        var lock: FileLock? = try Self.lock(runDirectory)
        if detach { lock = nil }
        let pidFile = runDirectory.appendingPathComponent("up.pid")
        if let pid = DownCommand.runningSupervisor(pidFile) {
            throw LifelineError(.conflict, "already up (supervisor pid \(pid)); stop it with 'lifeline down'")
        }
        let leftovers = LeftoverProcesses(in: runDirectory)
        if !leftovers.isEmpty {
            throw LifelineError(
                .conflict,
                "\(runDirectory.path) holds processes an earlier 'lifeline up' left running: \(leftovers.description); stop them with 'lifeline down --run-dir \(runDirectory.path)'"
            )
        }
        let binaries = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath()
            .deletingLastPathComponent()
        if detach {
            return try background(topologyPath, runDirectory, binaries)
        }
        let supervisor = try Supervisor(
            topology: topology, topologyPath: topologyPath, runDirectory: runDirectory, binaries: binaries)
        try "\(getpid())\n".write(to: pidFile, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(at: pidFile) }
        let watcher = SignalWatcher { number in
            Console.log("up", "received signal \(number); stopping the services, then the broker")
            SystemdNotifier.notify("STOPPING=1")
            DispatchQueue.global().async { supervisor.stop() }
        }
        let scaler = SignalWatcher([SIGUSR1]) { _ in
            DispatchQueue.global().async { supervisor.serveScaleRequest() }
        }
        try supervisor.start()
        Console.out("UP control=\(supervisor.control) services=\(topology.services.count) pid=\(getpid())")
        SystemdNotifier.notify("READY=1\nSTATUS=\(topology.services.count) services up")
        supervisor.waitUntilStopped()
        withExtendedLifetime((watcher, scaler, lock)) {}
        return supervisor.failure == nil ? 0 : 1
    }

    /// The run directory's lock (`up.lock`).
    /// - Throws: ``LifelineError`` (conflict) naming the supervisor that holds it.
    private static func lock(_ runDirectory: URL) throws -> FileLock {
        do {
            return try FileLock(path: runDirectory.appendingPathComponent("up.lock").path)
        } catch {
            switch error {
            case .held(let pid):
                throw LifelineError(
                    .conflict,
                    "already up\(pid.map { " (supervisor pid \($0))" } ?? ""); stop it with 'lifeline down'")
            case .unusable(let reason): throw LifelineError(.unavailable, reason)
            }
        }
    }

    /// Starts `lifeline up` again in its own session, its output in DIR/up.log, and returns once it
    /// says UP (or fails, with its last lines).
    private static func background(_ topology: String, _ runDirectory: URL, _ binaries: URL) throws -> Int32 {
        let logPath = runDirectory.appendingPathComponent("up.log").path
        _ = FileManager.default.createFile(atPath: logPath, contents: nil)
        let log = try FileHandle(forWritingTo: URL(fileURLWithPath: logPath))
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/setsid")
        process.arguments = [
            binaries.appendingPathComponent("lifeline").path, "up", "--topology", topology, "--run-dir",
            runDirectory.path,
        ]
        process.standardOutput = log
        process.standardError = log
        process.standardInput = FileHandle.nullDevice
        try process.run()
        let deadline = Date().addingTimeInterval(90)
        while Date() < deadline {
            let text = (try? String(contentsOfFile: logPath, encoding: .utf8)) ?? ""
            if let line = text.split(separator: "\n").first(where: { $0.hasPrefix("UP ") }) {
                Console.out(String(line))
                return 0
            }
            if !process.isRunning {
                Console.error(text.split(separator: "\n").suffix(10).joined(separator: "\n"))
                throw LifelineError(
                    .unavailable, "lifeline up stopped before everything was up; see \(logPath)")
            }
            usleep(50_000)
        }
        throw LifelineError(.timeout, "not up after 90 s; see \(logPath)")
    }
}
