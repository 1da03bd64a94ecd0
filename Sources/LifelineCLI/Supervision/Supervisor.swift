import Foundation
import Lifeline
import LifelineBroker
import LifelineProtocol
import LifelineSupport
import ZeroMQ

/// `lifeline up`'s supervisor: starts the broker (or every member of the topology's broker group),
/// then the topology's services layer by layer (`after`), each layer once the one before has
/// registered, each service as many processes as its `replicas`; restarts what dies, each process on
/// its own, as its policy says, with backoff and an OTP restart intensity; changes a service's number
/// of processes while running (``scale(_:to:)``); stops services in reverse start order (a layer at
/// a time, in parallel within it), then the broker.
final class Supervisor: @unchecked Sendable {
    // Everything mutable is touched on `queue` only.
    private let queue = DispatchQueue(label: "lifeline.supervisor")
    let topology: Topology
    let layers: [[String]]
    /// The broker, or the group's members.
    let brokers: [SupervisedChild]
    /// Each service's processes (its instances): the first is named as the service, the K-th `NAME@K`.
    /// Touched on `queue` only.
    private var instances: [String: [SupervisedChild]] = [:]
    private let entries: [String: Topology.ServiceEntry]
    private let binaries: URL
    let runDirectory: URL
    private var stopping = false
    private let finished = DispatchSemaphore(value: 0)
    private(set) var failure: String?
    /// The broker's control endpoint once it is up (a group's: the members' list).
    private(set) var control = ""

    init(topology: Topology, topologyPath: String, runDirectory: URL, binaries: URL) throws {
        self.topology = topology
        self.runDirectory = runDirectory
        self.binaries = binaries
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
        var entries: [String: Topology.ServiceEntry] = [:]
        for entry in topology.services {
            let executable = Self.executable(of: entry, in: binaries)
            guard FileManager.default.isExecutableFile(atPath: executable.path) else {
                throw LifelineError(.notFound, "service '\(entry.name)': no executable \(executable.path)")
            }
            entries[entry.name] = entry
        }
        self.entries = entries
        for entry in topology.services {
            instances[entry.name] = (1...entry.replicas).map { child(of: entry, number: $0) }
        }
    }

    private static func executable(of entry: Topology.ServiceEntry, in binaries: URL) -> URL {
        entry.executable.hasPrefix("/")
            ? URL(fileURLWithPath: entry.executable) : binaries.appendingPathComponent(entry.executable)
    }

    /// The `number`-th process of `entry`'s service.
    private func child(of entry: Topology.ServiceEntry, number: Int) -> SupervisedChild {
        let name = number == 1 ? entry.name : "\(entry.name)@\(number)"
        let limit = topology.restartLimit
        return SupervisedChild(
            name: name, executable: Self.executable(of: entry, in: binaries),
            arguments: ["--name", entry.name] + entry.arguments, restart: entry.restart,
            logPath: runDirectory.appendingPathComponent("\(name).log").path,
            tracker: RestartTracker(limit: limit.restarts, windowSeconds: limit.seconds))
    }

    /// The processes of the services in `names`, in order.
    private func children(of names: [String]) -> [SupervisedChild] {
        queue.sync { names.flatMap { instances[$0] ?? [] } }
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
        do { try Directories.create(directory.path, what: "the group's key directory", mode: 0o700) } catch {
            throw LifelineError(.internalError, error.description)
        }
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
                let bound = ReadyLine.fields(ready)
                control = bound["control"].map { String($0.split(separator: ",")[0]) } ?? topology.control
                // A restarted broker binds what the first one bound, not a wildcard's next pick.
                if let again = ReadyLine.binding(bound, in: broker.arguments) {
                    queue.sync { overrides[broker.name] = again }
                }
            }
        }
        if let group = topology.group { control = group.brokers }
        for layer in layers {
            let children = children(of: layer)
            for child in children {
                var arguments = child.arguments
                arguments.insert(contentsOf: ["--broker", control], at: 0)
                try launch(child, arguments: arguments)
            }
            for child in children {
                let readiness = child.waitForReadiness(seconds: 30)
                guard case .ready = readiness else {
                    stop()
                    throw LifelineError(
                        .unavailable,
                        readiness == .exited
                            ? "\(child.name) exited before it registered; see \(child.logPath)"
                            : "\(child.name) did not register within 30 s; see \(child.logPath)")
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
        guard !stopping, !child.retired else { return }
        let now = SystemClock.monotonicNanoseconds()
        let ran = now &- child.startedAt
        let how = signalled ? "was killed by signal \(status)" : "exited with status \(status)"
        let failed = signalled || status != 0
        switch child.restart {
        case .never:
            say("\(child.name) \(how) after \(Self.seconds(ran)); restart: never, so it stays stopped")
            child.stopped = true
            return
        case .onFailure where !failed:
            say("\(child.name) \(how) after \(Self.seconds(ran)); restart: on-failure, so it stays stopped")
            child.stopped = true
            return
        default: break
        }
        switch child.tracker.exited(at: now, ranNanoseconds: ran) {
        case .restart(let milliseconds):
            say("\(child.name) \(how) after \(Self.seconds(ran)); restarting it in \(milliseconds) ms")
            queue.asyncAfter(deadline: .now() + .milliseconds(milliseconds)) { [self] in
                guard !stopping else { return }
                if child.retired {
                    say("\(child.name) is not restarted: it was dropped meanwhile")
                    return
                }
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
            child.stopped = true
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
            Self.terminate(children(of: layer))
        }
        Self.terminate(brokers)
        for name in brokers.map(\.name) + children(of: layers.flatMap { $0 }).map(\.name) {
            try? FileManager.default.removeItem(at: runDirectory.appendingPathComponent("\(name).pid"))
        }
        say("stopped everything in \(Self.seconds(SystemClock.monotonicNanoseconds() - started))")
        finished.signal()
    }

    /// Runs `count` processes of the service `name` from now on: starts the missing ones (and waits
    /// until each has registered) or stops the last-started extra ones (SIGTERM: they unregister);
    /// the other processes are not touched. Returns what changed, in a sentence.
    /// - Throws: ``LifelineError``: `.notFound` for a service the topology does not run, `.badRequest`
    ///   for a count outside 1...64, `.unavailable` when a new process exits before it registers or
    ///   does not register within 30 s (it and those after it are then stopped, not kept).
    func scale(_ name: String, to count: Int) throws -> String {
        guard let entry = entries[name] else {
            throw LifelineError(
                .notFound,
                "the topology runs no service '\(name)'; it runs: \(entries.keys.sorted().joined(separator: ", "))"
            )
        }
        guard (1...Topology.maximumReplicas).contains(count) else {
            throw LifelineError(
                .badRequest, "a service runs 1...\(Topology.maximumReplicas) processes, not \(count)")
        }
        let (before, added, removed) = try queue.sync {
            () throws -> (Int, [SupervisedChild], [SupervisedChild]) in
            if stopping { throw LifelineError(.unavailable, "stopping: nothing is scaled") }
            var current = instances[name] ?? []
            // A process that stays stopped (its policy, or given up on) is no longer one of them: its
            // place is taken by a new one when the count asks for it.
            for child in current where child.stopped {
                child.retired = true
                try? FileManager.default.removeItem(
                    at: runDirectory.appendingPathComponent("\(child.name).pid"))
            }
            current.removeAll(where: \.stopped)
            let before = current.count
            var added: [SupervisedChild] = []
            var removed: [SupervisedChild] = []
            while current.count < count {
                let taken = Set(current.map(\.name))
                let number =
                    (1...).first { !taken.contains($0 == 1 ? name : "\(name)@\($0)") } ?? current.count + 1
                let child = child(of: entry, number: number)
                current.append(child)
                added.append(child)
            }
            while current.count > count {
                let child = current.removeLast()
                child.retired = true
                removed.append(child)
            }
            instances[name] = current
            return (before, added, removed)
        }
        for child in added {
            try launch(child, arguments: ["--broker", control] + child.arguments)
        }
        for (index, child) in added.enumerated() {
            let readiness = child.waitForReadiness(seconds: 30)
            guard case .ready = readiness else {
                // The processes that did not come up are not kept (nor restarted): the service runs
                // as many as before plus those that registered.
                let failed = Array(added[index...])
                let exited = readiness == .exited
                queue.sync {
                    for other in failed { other.retired = true }
                    instances[name]?.removeAll { started in failed.contains { $0 === started } }
                }
                Self.terminate(failed)
                for other in failed {
                    try? FileManager.default.removeItem(
                        at: runDirectory.appendingPathComponent("\(other.name).pid"))
                }
                throw LifelineError(
                    .unavailable,
                    exited
                        ? "\(child.name) exited before it registered (is '\(name)' replicable? see \(child.logPath)); not kept"
                        : "\(child.name) did not register within 30 s; see \(child.logPath); not kept")
            }
            say("\(child.name) up (pid \(child.pid))")
        }
        Self.terminate(removed)
        for child in removed {
            try? FileManager.default.removeItem(at: runDirectory.appendingPathComponent("\(child.name).pid"))
            say("\(child.name) stopped (scaled down)")
        }
        let pids = children(of: [name]).map { String($0.pid) }.joined(separator: ", ")
        return "\(name): \(before) → \(count) process\(count == 1 ? "" : "es") (pids \(pids))"
    }

    /// Answers the request `lifeline scale` left in `RUN/scale.request` (`{"id", "service",
    /// "replicas"}`) in `RUN/scale.reply` (`{"id", "ok", "message"}`); called on SIGUSR1.
    func serveScaleRequest() {
        let requestURL = runDirectory.appendingPathComponent(ScaleCommand.requestFile)
        guard let data = FileManager.default.contents(atPath: requestURL.path),
            let request = try? JSONParser.parse(Array(data)), let id = request["id"]?.stringValue
        else { return }
        var reply: [String: JSONValue] = ["id": .string(id)]
        do {
            guard let name = request["service"]?.stringValue, let count = request["replicas"]?.intValue else {
                throw LifelineError(.badRequest, "a scale request needs 'service' and 'replicas'")
            }
            let message = try scale(name, to: Int(count))
            say(message)
            reply["ok"] = true
            reply["message"] = .string(message)
        } catch let error as LifelineError {
            say("scale refused: \(error.message)")
            reply["ok"] = false
            reply["message"] = .string(error.message)
        } catch {
            reply["ok"] = false
            reply["message"] = .string("\(error)")
        }
        try? Data(JSONWriter.encode(.object(reply))).write(
            to: runDirectory.appendingPathComponent(ScaleCommand.replyFile), options: .atomic)
    }

    /// Waits until ``stop()`` has finished.
    func waitUntilStopped() { finished.wait() }

    private static func terminate(_ children: [SupervisedChild]) {
        let running = children.filter(\.isRunning)
        Termination.stop(running.map { ($0.name, $0.pid) }, as: "up") { pid in
            running.first { $0.pid == pid }?.isRunning ?? false
        }
    }

    static func seconds(_ nanoseconds: UInt64) -> String {
        String(format: "%.2f s", Double(nanoseconds) / 1e9)
    }
}
