import Foundation
import Glibc
import Lifeline
import LifelineProtocol
import LifelineSupport
import Synchronization
import Testing
import ZeroMQ

/// A real etcd (Debian's etcd-server) on loopback ports of its own, with its own data directory,
/// waited for by its "ready to serve client requests" line; stopped and removed by ``stop()``.
final class EtcdProcess: @unchecked Sendable {
    /// Whether `etcd` is on the PATH (deploy/test.sh installs it as root).
    static let available: Bool = FileManager.default.isExecutableFile(atPath: "/usr/bin/etcd")

    let process: ChildProcess
    let url: String
    private let directory: URL

    /// Starts etcd on loopback, or on the hub of `star` at its address.
    init(star: NetworkStar? = nil) async throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "lifeline-etcd-\(UUID().uuidString)")
        let host = star?.hubAddress ?? "127.0.0.1"
        let client = try Self.freePort()
        let peer = try Self.freePort()
        url = "http://\(host):\(client)"
        let arguments = [
            "--name", "test", "--data-dir", directory.path, "--listen-client-urls", url,
            "--advertise-client-urls", url, "--listen-peer-urls", "http://\(host):\(peer)",
            "--initial-advertise-peer-urls", "http://\(host):\(peer)",
            "--initial-cluster", "test=http://\(host):\(peer)",
        ]
        process =
            try star.map { try $0.process(in: $0.hub, "/usr/bin/etcd", arguments) }
            ?? ChildProcess("/usr/bin/etcd", arguments)
        try await process.waitForLine(.stderr, seconds: 20) { $0.contains("ready to serve client requests") }
    }

    func stop() {
        process.kill()
        try? FileManager.default.removeItem(at: directory)
    }

    /// A loopback TCP port nobody uses now (etcd's gateway cannot take port 0), below the system's
    /// ephemeral range: a member restarted on its port must find it free, and a port from that
    /// range may meanwhile be the local end of any process's outgoing connection (CI saw a restarted
    /// member refused with EADDRINUSE).
    /// Never twice in one test process: tests run in parallel, and one may pick a port another
    /// picked before either bound it.
    static func freePort() throws -> UInt16 {
        for _ in 0..<200 {
            let port = UInt16.random(in: 20_000..<32_768)
            let fresh = handedOut.withLock { $0.insert(port).inserted }
            if fresh && bindable(port) { return port }
        }
        throw HarnessError("no free port between 20000 and 32767")
    }

    private static let handedOut = Mutex<Set<UInt16>>([])

    private static func bindable(_ port: UInt16) -> Bool {
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(descriptor) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = port.bigEndian
        let length = socklen_t(MemoryLayout<sockaddr_in>.size)
        return withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(descriptor, $0, length) == 0 }
        }
    }
}

/// A `lifeline broker --group` member on ephemeral ports (fixed on restart: the same control, bus
/// and group socket), with its own state directory.
final class GroupMemberProcess: @unchecked Sendable {
    let name: String
    let arguments: [String]
    private(set) var process: ChildProcess
    /// Its control endpoint, as clients elsewhere reach it.
    let control: String
    /// Its control endpoint on its own host's loopback.
    let localControl: String
    /// Its state directory.
    let directory: URL
    /// Its group socket, as other members reach it.
    let replicate: String
    /// Its bus endpoint on its own host's loopback.
    let localBus: String
    private let launch: @Sendable ([String]) throws -> ChildProcess

    /// Starts member `name` of `group` (members `members`) on loopback, or on host `host` of `star`
    /// (bound on every interface there, advertised at the host's address). With `keys` (a
    /// directory of the members' key pairs) the group socket speaks CURVE; without, `--insecure`.
    init(
        _ name: String, group: String, members: [String], etcd: String, state: URL, extra: [String] = [],
        keys: URL? = nil, star: NetworkStar? = nil, host: Int = 0
    ) async throws {
        self.name = name
        directory = state.appendingPathComponent(name)
        let ports = try (0..<3).map { _ in try EtcdProcess.freePort() }
        let address = star?.addresses[host] ?? "127.0.0.1"
        let bound = star == nil ? "127.0.0.1" : "0.0.0.0"
        arguments =
            [
                "broker", "--group", group, "--member", name, "--members", members.joined(separator: ","),
                "--etcd", etcd, "--state-dir", directory.path,
                "--control", "tcp://\(bound):\(ports[0])", "--bus", "tcp://\(bound):\(ports[1])",
                "--replicate", "tcp://\(bound):\(ports[2])", "--advertise", address, "--lease-ttl", "2",
                "--heartbeat-interval", "250",
            ] + (keys.map { ["--group-keys", $0.path] } ?? ["--insecure"]) + extra
        control = "tcp://\(address):\(ports[0])"
        replicate = "tcp://\(address):\(ports[2])"
        localBus = "tcp://127.0.0.1:\(ports[1])"
        localControl = "tcp://127.0.0.1:\(ports[0])"
        if let star {
            let namespace = star.hosts[host]
            launch = { try star.process(in: namespace, "lifeline", $0) }
        } else {
            launch = { try ChildProcess("lifeline", $0) }
        }
        process = try launch(arguments)
    }

    /// Its role as its last READY (leads) or STANDBY line says; nil before either.
    var role: String? {
        process.lines().last { $0.hasPrefix("READY ") || $0.hasPrefix("STANDBY ") }?.split(separator: " ")
            .first
            .map(String.init)
    }

    /// The log lines of its earlier runs (before each restart).
    private(set) var earlierLogs: [String] = []

    /// How many terms it won, in this run and the earlier ones.
    var termsWon: Int {
        (earlierLogs + process.lines(.stderr)).filter { $0.contains("won the leader key under term") }.count
    }

    /// Kills it with `signal` and starts it again with the same arguments.
    func restart(_ signal: Int32 = SIGKILL) async throws {
        process.kill(signal)
        _ = try await process.waitForExit()
        earlierLogs += process.lines(.stderr)
        process = try launch(arguments)
    }
}

/// A group under test: a real etcd, three members `a`, `b`, `c` of group `demo`, and journaled
/// `lifeline-probe` services `counter1…` handling `test.tick`, each given the members' list.
final class GroupRig: @unchecked Sendable {
    let etcd: EtcdProcess
    let state: URL
    let members: [GroupMemberProcess]
    /// The members' key pairs (`--group-keys`).
    let keys: URL
    private(set) var probes: [ChildProcess] = []
    private(set) var journals: [URL] = []

    /// The members' control endpoints, as clients take them.
    var brokers: String { members.map(\.control).joined(separator: ",") }

    /// The member whose last role line says it leads.
    var leader: GroupMemberProcess? { members.first { $0.role == "READY" } }

    /// Starts etcd and the members, waits until one leads and two stand by, then starts `services`
    /// probes (the first hosting `apps`) and waits for each to be registered.
    /// With `secure: false` the members run `--insecure` (a plain-text group socket).
    init(services: Int, events: Int, apps: [String] = [], extra: [String] = [], secure: Bool = true)
        async throws
    {
        etcd = try await EtcdProcess()
        state = FileManager.default.temporaryDirectory.appendingPathComponent(
            "lifeline-group-\(UUID().uuidString)")
        let names = ["a", "b", "c"]
        keys = state.appendingPathComponent("keys")
        try Self.makeKeys(names, in: keys)
        var members: [GroupMemberProcess] = []
        for name in names {
            members.append(
                try await GroupMemberProcess(
                    name, group: "demo", members: names, etcd: etcd.url, state: state,
                    extra: ["--journal-size", "\(max(20_000, events))"] + extra, keys: secure ? keys : nil))
        }
        self.members = members
        do {
            try await start(services: services, apps: apps)
        } catch {
            stop()
            throw error
        }
    }

    private func start(services: Int, apps: [String]) async throws {
        let members = self.members
        try await showingLogs {
            try await LifecycleSemanticsTests.poll(seconds: 30) {
                // Early elections may have come and gone: each member's last word counts.
                members.filter { $0.role == "READY" }.count == 1
                    && members.filter { $0.role == "STANDBY" }.count == 2
            }
        }
        for index in 1...services {
            let journal = FileManager.default.temporaryDirectory.appendingPathComponent(
                "lifeline-probe-\(UUID().uuidString).journal")
            journals.append(journal)
            // The app host's sessions leave the stack if a broker finds it silent past its window
            // (a crash, by design): 2 s, not 400 ms, so a loaded machine's stall of the host during
            // a failover is not taken for one.
            let hosting =
                index == 1 && !apps.isEmpty
                ? ["--apps", apps.joined(separator: ","), "--liveness", "10"] : ["--liveness", "2"]
            probes.append(
                try ChildProcess(
                    "lifeline-probe",
                    [
                        "--broker", brokers, "--name", "counter\(index)", "--events", "test.tick",
                        "--journal",
                        journal.path, "--heartbeat-interval", "200",
                    ] + hosting))
        }
        for probe in probes { try await probe.waitForLine(startingWith: "READY service=", seconds: 30) }
    }

    /// Writes a key pair for each of `names` into `directory`, as `lifeline keys new` does.
    static func makeKeys(_ names: [String], in directory: URL) throws {
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        for name in names {
            let pair = try CurveKeyPair.generate()
            _ = try KeyFile.write(
                name: name, publicKey: pair.publicKey, secretKey: pair.secretKey, in: directory.path)
        }
    }

    /// How many terms the members won (their "won the leader key under term" lines).
    var termsWon: Int { members.map(\.termsWon).reduce(0, +) }

    /// Runs `body`; when it throws, prints the last log lines of the members and the services first.
    func showingLogs(_ body: () async throws -> Void) async throws {
        let services = probes.enumerated().map { ("counter\($0.offset + 1)", $0.element) }
        try await Self.showingLogs(of: members, services: services, body)
    }

    /// Runs `body`; when it throws, prints the last log lines (and lines of output) of `members`
    /// and the last log lines of each named service first.
    static func showingLogs(
        of members: [GroupMemberProcess], services: [(name: String, process: ChildProcess)],
        _ body: () async throws -> Void
    ) async throws {
        do {
            try await body()
        } catch {
            for member in members {
                print(
                    "member \(member.name):\n"
                        + member.process.lines(.stderr).suffix(30).joined(separator: "\n") + "\n"
                        + member.process.lines().suffix(5).joined(separator: "\n"))
            }
            for service in services {
                print(
                    "\(service.name):\n" + service.process.lines(.stderr).suffix(30).joined(separator: "\n"))
            }
            throw error
        }
    }

    /// Runs the CLI against the group.
    func cli(_ arguments: [String]) async throws -> CLIResult {
        // Longer than the CLI's own longest time-out (an APPS change's 60 s): a command the group
        // does not answer ends with its own sentence, which the test shows.
        try await CLIResult.run(arguments, environment: ["LIFELINE_BROKER": brokers], seconds: 90)
    }

    /// The micro-app stack as `id app` lines; nil while the group cannot answer.
    func stack() async throws -> [String]? {
        let list = try await cli(["apps", "list", "--json"])
        guard list.status == 0 else { return nil }
        return try JSONParser.parse(list.output)["stack"]?.arrayValue?.map {
            "\($0["id"]?.stringValue ?? "?") \($0["app"]?.stringValue ?? "?")"
        }
    }

    /// Waits until every probe has handled event `total`, stops them, and tallies each journal.
    func tallies(total: Int) async throws -> [(handled: [Int64], lost: Int, duplicated: Int, outOfOrder: Int)]
    {
        for probe in probes { try await probe.waitForLine(seconds: 120) { $0.contains("\"n\":\(total)") } }
        for probe in probes {
            probe.kill(SIGTERM)
            _ = try await probe.waitForExit()
        }
        return try journals.map { try ChaosTests.tally($0, total: total) }
    }

    func stop() {
        for child in probes + members.map(\.process) { child.kill() }
        etcd.stop()
        try? FileManager.default.removeItem(at: state)
        for journal in journals { try? FileManager.default.removeItem(at: journal) }
    }
}

/// A numbered stream of `test.tick` (n = 1…`total`) to a group's list, each publish awaited (with
/// its publication id, so that a repeat after a failover is answered once).
final class TickPublisher: Sendable {
    let client: LifelineClient
    let total: Int
    /// Whether the stream goes on past `total` until ``stop()``.
    let untilStopped: Bool
    private let count = Atomic<Int>(0)
    private let stopped = Atomic<Bool>(false)

    init(brokers: String, total: Int, untilStopped: Bool = false) {
        client = LifelineClient(broker: brokers)
        self.total = total
        self.untilStopped = untilStopped
    }

    /// How many were published so far (once ``run()`` returned: all of them, `1...published`).
    var published: Int { count.load(ordering: .relaxed) }

    /// Ends a stream made `untilStopped` once it has published `total`.
    func stop() { stopped.store(true, ordering: .relaxed) }

    /// Publishes `1...total`, one every 10 ms at most, so that the group's commit rate does not end
    /// the stream before the test's kills and restarts; made `untilStopped`, it then goes on
    /// (`total + 1`, …) until ``stop()``: on a loaded host the restarts and CLI runs between two
    /// kills can take longer than the rest of `total`, and a kill after the stream's end would find
    /// nothing to publish (no publish is then accepted after it).
    func run() async throws {
        let clock = ContinuousClock()
        var n = 1
        while n <= total || (untilStopped && !stopped.load(ordering: .relaxed)) {
            let next = clock.now + .milliseconds(10)
            try await client.publish("test.tick", ["n": .int(Int64(n))], timeout: .seconds(60))
            count.store(n, ordering: .relaxed)
            n += 1
            try await clock.sleep(until: next)
        }
    }
}
