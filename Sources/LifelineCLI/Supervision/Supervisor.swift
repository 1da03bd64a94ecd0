import Foundation
import Lifeline
import LifelineBroker
import LifelineProtocol
import LifelineSupport
import ZeroMQ

/// `lifeline up`'s supervisor: starts the broker (or every member of the topology's broker group),
/// then the topology's services layer by layer (`after`), each layer once the one before has
/// registered; restarts what dies, as its policy says, with backoff and an OTP restart intensity;
/// stops services in reverse start order (a layer at a time, in parallel within it), then the
/// broker.
final class Supervisor: @unchecked Sendable {
    // Everything mutable is touched on `queue` only.
    private let queue = DispatchQueue(label: "lifeline.supervisor")
    let topology: Topology
    let layers: [[String]]
    /// The broker, or the group's members.
    let brokers: [SupervisedChild]
    let services: [String: SupervisedChild]
    let runDirectory: URL
    private var stopping = false
    private let finished = DispatchSemaphore(value: 0)
    private(set) var failure: String?
    /// The broker's control endpoint once it is up (a group's: the members' list).
    private(set) var control = ""

    init(topology: Topology, topologyPath: String, runDirectory: URL, binaries: URL) throws {
        self.topology = topology
        self.runDirectory = runDirectory
        layers = try topology.startLayers()
        let limit = topology.restartLimit
        func tracker() -> RestartTracker {
            RestartTracker(limit: limit.restarts, windowSeconds: limit.seconds)
        }
        let lifeline = binaries.appendingPathComponent("lifeline")
        if let group = topology.group {
            let keys = try Self.groupKeys(group, topologyPath: topologyPath, runDirectory: runDirectory)
            brokers = group.members.map { member in
                SupervisedChild(
                    name: "broker-\(member.member)", executable: lifeline,
                    arguments: [
                        "broker", "--group", group.name, "--member", member.member, "--members",
                        group.members.map(\.member).joined(separator: ","), "--etcd",
                        group.etcd.joined(separator: ","), "--control", member.control, "--bus", member.bus,
                        "--replicate", member.replicate, "--state-dir",
                        runDirectory.appendingPathComponent("state-\(member.member)").path, "--topology",
                        topologyPath, "--group-keys", keys,
                    ] + (group.leaseSeconds.map { ["--lease-ttl", "\($0)"] } ?? []), restart: .always,
                    logPath: runDirectory.appendingPathComponent("broker-\(member.member).log").path,
                    tracker: tracker())
            }
        } else {
            brokers = [
                SupervisedChild(
                    name: "broker", executable: lifeline,
                    arguments: [
                        "broker", "--control", topology.control, "--bus", topology.bus, "--state-dir",
                        runDirectory.appendingPathComponent("state").path, "--topology", topologyPath,
                    ], restart: .always, logPath: runDirectory.appendingPathComponent("broker.log").path,
                    tracker: tracker())
            ]
        }
        var services: [String: SupervisedChild] = [:]
        for entry in topology.services {
            let executable =
                entry.executable.hasPrefix("/")
                ? URL(fileURLWithPath: entry.executable) : binaries.appendingPathComponent(entry.executable)
            guard FileManager.default.isExecutableFile(atPath: executable.path) else {
                throw LifelineError(.notFound, "service '\(entry.name)': no executable \(executable.path)")
            }
            services[entry.name] = SupervisedChild(
                name: entry.name, executable: executable,
                arguments: ["--name", entry.name] + entry.arguments,
                restart: entry.restart,
                logPath: runDirectory.appendingPathComponent("\(entry.name).log").path,
                tracker: tracker())
        }
        self.services = services
    }

    /// The directory of the group's member keys: the topology's `keys` (relative to the topology
    /// file), or `RUN/group-keys`, where a key pair is made for each member that has none.
    /// - Throws: ``LifelineError`` when a key pair cannot be written.
    private static func groupKeys(_ group: GroupTopology, topologyPath: String, runDirectory: URL) throws
        -> String
    {
        if let keys = group.keys {
            if keys.hasPrefix("/") { return keys }
            return URL(fileURLWithPath: topologyPath).deletingLastPathComponent().appendingPathComponent(keys)
                .path
        }
        let directory = runDirectory.appendingPathComponent("group-keys")
        try? FileManager.default.createDirectory(
            at: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        for member in group.members
        where !FileManager.default.fileExists(
            atPath: directory.appendingPathComponent("\(member.member).key").path)
        {
            try? FileManager.default.removeItem(at: directory.appendingPathComponent("\(member.member).pub"))
            let pair = try CurveKeyPair.generate()
            do {
                _ = try KeyFile.write(
                    name: member.member, publicKey: pair.publicKey, secretKey: pair.secretKey,
                    in: directory.path)
            } catch {
                throw LifelineError(.internalError, "cannot make the group's keys: \(error.description)")
            }
        }
        return directory.path
    }

    private func say(_ line: String) { Console.log("up", line, level: Console.level(of: line)) }

    /// Starts everything; throws (after stopping what started) when a process does not come up.
    func start() throws {
        for broker in brokers { try launch(broker) }
        for broker in brokers {
            // A group's member is up once it leads (READY) or holds the leader's copy (STANDBY).
            guard let ready = broker.waitUntilReady(seconds: topology.group == nil ? 15 : 30) else {
                stop()
                throw LifelineError(.unavailable, "\(broker.name) did not start; see \(broker.logPath)")
            }
            say("\(broker.name) up (pid \(broker.pid)): \(ready)")
            if topology.group == nil {
                control =
                    ready.split(separator: " ").first { $0.hasPrefix("control=") }.map {
                        String($0.dropFirst(8).split(separator: ",")[0])
                    } ?? topology.control
            }
        }
        if let group = topology.group { control = group.brokers }
        for layer in layers {
            let children = layer.compactMap { services[$0] }
            for child in children {
                var arguments = child.arguments
                arguments.insert(contentsOf: ["--broker", control], at: 0)
                try launch(child, arguments: arguments)
            }
            for child in children {
                guard child.waitUntilReady(seconds: 30) != nil else {
                    stop()
                    throw LifelineError(
                        .unavailable, "\(child.name) did not register within 30 s; see \(child.logPath)")
                }
                say("\(child.name) up (pid \(child.pid))")
            }
        }
    }

    private func launch(_ child: SupervisedChild, arguments: [String]? = nil) throws {
        try queue.sync {
            if let arguments { overrides[child.name] = arguments }
            try child.launch(arguments: overrides[child.name]) { [self] status, signalled in
                queue.async { self.exited(child, status: status, signalled: signalled) }
            }
            try? "\(child.pid)\n".write(
                to: runDirectory.appendingPathComponent("\(child.name).pid"), atomically: true,
                encoding: .utf8)
        }
    }

    private var overrides: [String: [String]] = [:]

    /// A child exited on its own: restart it, as its policy and the intensity allow.
    private func exited(_ child: SupervisedChild, status: Int32, signalled: Bool) {
        guard !stopping else { return }
        let now = SystemClock.monotonicNanoseconds()
        let ran = now &- child.startedAt
        let how = signalled ? "was killed by signal \(status)" : "exited with status \(status)"
        let failed = signalled || status != 0
        switch child.restart {
        case .never:
            say("\(child.name) \(how) after \(Self.seconds(ran)); restart: never, so it stays stopped")
            return
        case .onFailure where !failed:
            say("\(child.name) \(how) after \(Self.seconds(ran)); restart: on-failure, so it stays stopped")
            return
        default: break
        }
        switch child.tracker.exited(at: now, ranNanoseconds: ran) {
        case .restart(let milliseconds):
            say("\(child.name) \(how) after \(Self.seconds(ran)); restarting it in \(milliseconds) ms")
            queue.asyncAfter(deadline: .now() + .milliseconds(milliseconds)) { [self] in
                guard !stopping else { return }
                do {
                    try child.launch(arguments: overrides[child.name]) { [self] status, signalled in
                        queue.async { self.exited(child, status: status, signalled: signalled) }
                    }
                    try? "\(child.pid)\n".write(
                        to: runDirectory.appendingPathComponent("\(child.name).pid"), atomically: true,
                        encoding: .utf8)
                } catch {
                    say("could not restart \(child.name): \(error)")
                }
            }
        case .giveUp(let restarts):
            child.gaveUp = true
            let limit = topology.restartLimit
            say(
                "gave up on \(child.name): \(restarts) restarts within \(limit.seconds) s (restart intensity \(limit.restarts) in \(limit.seconds) s); see \(child.logPath)"
            )
            if brokers.contains(where: { $0 === child }) {
                guard brokers.allSatisfy(\.gaveUp) else {
                    say("the group goes on with its other members")
                    return
                }
                failure = "the broker kept exiting"
                say("the broker is gone for good: stopping everything")
                DispatchQueue.global().async { self.stop() }
            } else {
                say("the other services keep running")
            }
        }
    }

    /// Stops the services in reverse start order, a layer at a time and in parallel within it,
    /// then the broker; SIGTERM first, SIGKILL after 5 s.
    func stop() {
        let already = queue.sync { () -> Bool in
            defer { stopping = true }
            return stopping
        }
        if already { return }
        let started = SystemClock.monotonicNanoseconds()
        for layer in layers.reversed() {
            Self.terminate(layer.compactMap { services[$0] })
        }
        Self.terminate(brokers)
        for name in brokers.map(\.name) + services.keys.sorted() {
            try? FileManager.default.removeItem(at: runDirectory.appendingPathComponent("\(name).pid"))
        }
        say("stopped everything in \(Self.seconds(SystemClock.monotonicNanoseconds() - started))")
        finished.signal()
    }

    /// Waits until ``stop()`` has finished.
    func waitUntilStopped() { finished.wait() }

    private static func terminate(_ children: [SupervisedChild]) {
        let running = children.filter(\.isRunning)
        for child in running { kill(child.pid, SIGTERM) }
        let deadline = SystemClock.monotonicNanoseconds() + 5_000_000_000
        while running.contains(where: \.isRunning), SystemClock.monotonicNanoseconds() < deadline {
            usleep(5000)
        }
        for child in running where child.isRunning {
            Console.log("up", "\(child.name) did not stop within 5 s; killing it")
            kill(child.pid, SIGKILL)
        }
    }

    static func seconds(_ nanoseconds: UInt64) -> String {
        String(format: "%.2f s", Double(nanoseconds) / 1e9)
    }
}
