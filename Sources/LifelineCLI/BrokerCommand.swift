import Foundation
import Lifeline
import LifelineBroker
import LifelineProtocol
import LifelineSupport
import ZeroMQ

/// `lifeline broker`: runs the broker in the foreground.
enum BrokerCommand: CLICommand {
    static let name = "broker"
    static let summary = "run the broker (the Context) in the foreground"
    static let usage = """
        usage: lifeline broker [options]

        Runs the broker. Prints 'READY control=EP bus=EP' on stdout once it is serving; logs go to
        stderr. SIGINT or SIGTERM tells the services it is leaving and exits 0; SIGHUP reads the
        --policy file again.

        Endpoints may use wildcard ports, e.g. tcp://127.0.0.1:*; READY shows the ports chosen.
        """
    static let control = CommandLineOption.value(
        "--control", "EP[,EP]",
        help: "control (ROUTER) endpoints (default \(BrokerConfiguration.defaultControlEndpoint))")
    static let bus = CommandLineOption.value(
        "--bus", "EP[,EP]",
        help:
            "lifecycle bus (XPUB) endpoints; the first is announced (default \(BrokerConfiguration.defaultBusEndpoint))"
    )
    static let heartbeatInterval = CommandLineOption.value(
        "--heartbeat-interval", "MS", help: "how often the broker heartbeats services (default 1000)")
    static let liveness = CommandLineOption.value(
        "--liveness", "N", help: "how many broker heartbeats a service may miss (default 3)")
    static let callTimeout = CommandLineOption.value(
        "--call-timeout", "MS", help: "deadline of calls that name none (default 5000)")
    static let maxMessageBytes = CommandLineOption.value(
        "--max-message-bytes", "N", help: "larger requests are refused with 413 (default 8388608)")
    static let busHwm = CommandLineOption.value(
        "--bus-hwm", "N",
        help:
            "bus messages (an event, or a batch of at most 1024 events and 64 KiB) queued per slow subscriber before the bus drops them (default 100000, 0: no limit)"
    )
    static let journalSize = CommandLineOption.value(
        "--journal-size", "N", help: "events kept for replay to reconnecting services (default 10000)")
    static let journalAge = CommandLineOption.value(
        "--journal-age", "MS", help: "journal events older than this are forgotten (default 600000)")
    static let stepTimeout = CommandLineOption.value(
        "--step-timeout", "MS", help: "default deadline of a dispatch step (default 2000)")
    static let ackTimeout = CommandLineOption.value(
        "--ack-timeout", "MS", help: "default wait of an acknowledged publish (default 5000)")
    static let publishMemory = CommandLineOption.value(
        "--publish-memory", "N",
        help: "publication ids remembered to answer repeated PUBLISH once (default 65536)")
    static let journalBytes = CommandLineOption.value(
        "--journal-bytes", "N",
        help: "bytes of events the journal holds at most, oldest dropped first (default 67108864)")
    static let maxNamesPerConnection = CommandLineOption.value(
        "--max-names-per-connection", "N",
        help: "names one connection may register; beyond: 429 (default 100)")
    static let maxSubscriptionsPerConnection = CommandLineOption.value(
        "--max-subscriptions-per-connection", "N",
        help:
            "topics one bus connection may subscribe to; beyond: refused, and a connection refused 32 times is closed (default 1024)"
    )
    static let maxHeartbeatWindow = CommandLineOption.value(
        "--max-heartbeat-window", "MS",
        help: "longest interval × liveness a service may ask for; beyond: 400 (default 60000)")
    static let maxEventNames = CommandLineOption.value(
        "--max-event-names", "N",
        help:
            "distinct event names the broker keeps positions for; a PUBLISH of a new one beyond: 429 (default 10000)"
    )
    static let topology = CommandLineOption.value(
        "--topology", "FILE",
        help:
            "read the Launcher, the expected services and the boot's phases and task overrides from a topology file (deploy/topology.json)"
    )
    static let stateDir = CommandLineOption.value(
        "--state-dir", "DIR",
        help:
            "keep the journal (journal.log: epoch and events survive a restart), the micro-app stack, the boot state (run-once tasks, the last report) and the lifecycle state (until a clean stop) in DIR across restarts"
    )
    static let launcher = CommandLineOption.value(
        "--launcher", "APP",
        help:
            "the Launcher micro-app, started by the boot's last phase (broker.launcher), or at once by a host that offers it after the boot when the stack has none"
    )
    static let appTimeout = CommandLineOption.value(
        "--app-timeout", "MS", help: "how long a host may take for one micro-app callback (default 2000)")
    static let bootWait = CommandLineOption.value(
        "--boot-wait", "MS", help: "how long a boot waits for the expected services (default 30000)")
    static let spinUs = CommandLineOption.value(
        "--spin-us", "N",
        help:
            "keep polling N µs after the last message before sleeping (default 0): lower latency under load for a core's worth of CPU while busy"
    )
    static let key = CommandLineOption.value(
        "--key", "FILE",
        help:
            "the broker's CURVE key pair (lifeline keys new broker): both sockets encrypt, and every peer must authenticate with a key of its own"
    )
    static let policy = CommandLineOption.value(
        "--policy", "FILE",
        help:
            "the allow-list and what each key may do (JSON, see README); read again on SIGHUP; a key it drops is cut off. Needs --key"
    )
    static let insecure = CommandLineOption.flag(
        "--insecure",
        help: "allow binding a non-loopback endpoint without CURVE (and /metrics without a token)")
    static let metrics = CommandLineOption.value(
        "--metrics", "HOST:PORT",
        help:
            "serve Prometheus metrics at http://HOST:PORT/metrics (e.g. 127.0.0.1:9464); off loopback only with --metrics-token (or --insecure)"
    )
    static let metricsToken = CommandLineOption.value(
        "--metrics-token", "FILE",
        help:
            "/metrics answers only requests with 'Authorization: Bearer TOKEN', TOKEN being the file's text (mode 0600); others get 401"
    )
    static let group = CommandLineOption.value(
        "--group", "NAME",
        help:
            "run as a member of a replicated broker group (needs --member, --members, --etcd, --state-dir); one member leads, the others keep a copy and take over"
    )
    static let member = CommandLineOption.value(
        "--member", "ID", help: "this broker's name in its group")
    static let members = CommandLineOption.value(
        "--members", "ID,ID,…",
        help: "every member of the group, the same set on each (3 or 5: a majority must hold each entry)")
    static let etcd = CommandLineOption.value(
        "--etcd", "URL[,URL]",
        help: "etcd's client URLs, e.g. http://127.0.0.1:2379: the group's leadership lives there")
    static let replicate = CommandLineOption.value(
        "--replicate", "EP",
        help: "the group socket other members reach this one at (default tcp://127.0.0.1:*)")
    static let advertise = CommandLineOption.value(
        "--advertise", "HOST",
        help: "the host other members and clients reach this broker at, in place of a wildcard address")
    static let leaseTTL = CommandLineOption.value(
        "--lease-ttl", "S",
        help:
            "the etcd lease of a member, in seconds (default 2; a leader stops 0.5 s before it could expire)")
    static let groupKeys = CommandLineOption.value(
        "--group-keys", "DIR",
        help:
            "the members' CURVE keys: DIR/MEMBER.key (this member's pair, mode 0600) and DIR/ID.pub of every member (lifeline keys new a b c --dir DIR); the group socket admits those keys only. Without it, --insecure"
    )
    static let groupOptions = [group, member, members, etcd, replicate, advertise, leaseTTL, groupKeys]
    static let options =
        groupOptions + [
            control, bus, heartbeatInterval, liveness, callTimeout, maxMessageBytes, busHwm, journalSize,
            journalAge, stepTimeout, ackTimeout, publishMemory, journalBytes, maxNamesPerConnection,
            maxSubscriptionsPerConnection,
            maxHeartbeatWindow, maxEventNames, topology, stateDir, launcher, appTimeout, bootWait, spinUs,
            key, policy, insecure, metrics, metricsToken,
        ] + Console.options

    static func run(_ arguments: inout CommandLineArguments) throws -> Int32 {
        // A broker whose log pipe closes (its supervisor was killed) goes on; its writes fail.
        signal(SIGPIPE, SIG_IGN)
        var configuration = BrokerConfiguration()
        if let control = try arguments.option(Self.control) {
            configuration.controlEndpoints = try BrokerEndpoints.parse(control, "--control")
        }
        if let bus = try arguments.option(Self.bus) {
            configuration.busEndpoints = try BrokerEndpoints.parse(bus, "--bus")
        }
        // A wildcard (tcp port * or 0, ipc://*) binds a new endpoint each time.
        if let shared = configuration.controlEndpoints.first(where: {
            !($0.hasSuffix(":*") || $0.hasSuffix(":0") || $0 == "ipc://*")
                && configuration.busEndpoints.contains($0)
        }) {
            throw UsageError("--control and --bus both bind \(shared): give each its own")
        }
        let interval = try arguments.integer(Self.heartbeatInterval, in: HeartbeatSettings.intervalRange)
        let liveness = try arguments.integer(Self.liveness, in: HeartbeatSettings.livenessRange)
        configuration.heartbeat = HeartbeatSettings(
            intervalMilliseconds: interval ?? configuration.heartbeat.intervalMilliseconds,
            liveness: liveness ?? configuration.heartbeat.liveness)
        if let timeout = try arguments.integer(
            Self.callTimeout, in: 1...configuration.maximumCallTimeout.wholeMilliseconds)
        {
            configuration.defaultCallTimeout = .milliseconds(timeout)
        }
        if let bytes = try arguments.integer(Self.maxMessageBytes, in: 1024...(1 << 30)) {
            configuration.maximumMessageBytes = bytes
        }
        if let hwm = try arguments.integer(Self.busHwm, in: 0...100_000_000) {
            configuration.busHighWaterMark = hwm
        }
        if let size = try arguments.integer(Self.journalSize, in: 0...10_000_000) {
            configuration.journalCapacity = size
        }
        if let age = try arguments.integer(Self.journalAge, in: 1...86_400_000) {
            configuration.journalMaximumAge = .milliseconds(age)
        }
        if let step = try arguments.integer(Self.stepTimeout, in: 1...3_600_000) {
            configuration.dispatchStepTimeout = .milliseconds(step)
        }
        if let count = try arguments.integer(Self.publishMemory, in: 0...10_000_000) {
            configuration.rememberedPublications = count
        }
        if let bytes = try arguments.integer(Self.journalBytes, in: 0...(1 << 40)) {
            configuration.journalMaximumBytes = bytes
        }
        if let count = try arguments.integer(Self.maxNamesPerConnection, in: 1...1_000_000) {
            configuration.maximumNamesPerConnection = count
        }
        if let count = try arguments.integer(Self.maxSubscriptionsPerConnection, in: 1...1_000_000) {
            configuration.maximumSubscriptionsPerConnection = count
        }
        if let window = try arguments.integer(Self.maxHeartbeatWindow, in: 10...60_000_000) {
            configuration.maximumHeartbeatWindow = .milliseconds(window)
        }
        if let count = try arguments.integer(Self.maxEventNames, in: 1...100_000_000) {
            configuration.maximumEventNames = count
        }
        if let ack = try arguments.integer(Self.ackTimeout, in: 1...3_600_000) {
            configuration.acknowledgementTimeout = .milliseconds(ack)
        }
        configuration.stateDirectory = try arguments.option(Self.stateDir)
        if let path = try arguments.option(Self.topology) {
            guard let data = FileManager.default.contents(atPath: path) else {
                throw UsageError("cannot read the topology \(path)")
            }
            do {
                let topology = try Topology.parse(Array(data))
                configuration.launcherApp = topology.launcher
                configuration.expectedServices = topology.services.map(\.name)
                configuration.bootPhases = topology.bootPhases
                configuration.bootOverrides = topology.bootTasks
                if let wait = topology.bootWaitMilliseconds { configuration.bootWait = .milliseconds(wait) }
            } catch let error as JSONParseError {
                throw UsageError("\(path) is not JSON: \(error)")
            } catch let error as ProtocolError {
                throw UsageError("\(path): \(error.message)")
            }
        }
        if let launcher = try arguments.option(Self.launcher) {
            if let problem = ServiceRegistration.nameProblem(launcher, what: "--launcher") {
                throw UsageError(problem)
            }
            configuration.launcherApp = launcher
        }
        if let timeout = try arguments.integer(Self.appTimeout, in: 1...3_600_000) {
            configuration.appCallbackTimeout = .milliseconds(timeout)
        }
        if let wait = try arguments.integer(Self.bootWait, in: 0...3_600_000) {
            configuration.bootWait = .milliseconds(wait)
        }
        if let spin = try arguments.integer(Self.spinUs, in: 0...1_000_000) {
            configuration.spinMicroseconds = spin
        }
        if let keyFile = try arguments.option(Self.key) {
            do {
                let pair = try KeyFile.readPair(keyFile)
                configuration.curveKeys = try CurveKeyPair(secretKey: pair.secretKey)
            } catch let problem as KeyFile.Problem {
                throw UsageError("--key: \(problem)")
            } catch {
                throw UsageError("--key: \(keyFile) holds no valid CURVE secret key")
            }
        }
        configuration.policyPath = try arguments.option(Self.policy)
        configuration.insecure = arguments.flag(Self.insecure)
        configuration.metricsAddress = try arguments.option(Self.metrics)
        // The address's form first: a malformed one is named as such, not judged for its token.
        if let address = configuration.metricsAddress,
            address.lastIndex(of: ":").flatMap({ UInt16(address[address.index(after: $0)...]) }) == nil
        {
            throw UsageError("--metrics expects HOST:PORT, e.g. 127.0.0.1:9464, not '\(address)'")
        }
        if let tokenFile = try arguments.option(Self.metricsToken) {
            let token: String
            do {
                token = try KeyFile.secret(tokenFile)
            } catch {
                throw UsageError("--metrics-token: \(error)")
            }
            // As the console's: a token short enough to guess is no token.
            guard token.count >= 16, token.unicodeScalars.allSatisfy({ (0x21...0x7E).contains($0.value) })
            else {
                throw UsageError(
                    "--metrics-token: '\(tokenFile)' must hold one token of at least 16 printable characters (no spaces)"
                )
            }
            configuration.metricsToken = token
        }
        try Console.configure(parsing: &arguments)
        if let problem = configuration.securityProblem { throw UsageError(problem) }
        let group = try groupConfiguration(&arguments, insecure: configuration.insecure)
        try arguments.finish()

        let identity = BrokerIdentity(
            pid: Int(getpid()), host: ProcessInfo.processInfo.hostName, version: CLI.version)
        if let group {
            try GroupBrokerRun.serve(configuration, group, identity)
        } else {
            try serve(configuration, identity)
        }
        Console.log("broker", "stopped")
        return 0
    }

    /// Runs the broker until a signal stops it; the server (and its ZeroMQ context, which flushes the
    /// last messages) is released before this returns.
    private static func serve(_ configuration: BrokerConfiguration, _ identity: BrokerIdentity) throws {
        let server: BrokerServer
        do {
            server = try BrokerServer(configuration: configuration, identity: identity) {
                Console.log("broker", $0, level: Console.level(of: $0))
            }
        } catch {
            throw LifelineError(.internalError, "cannot start: \(error)")
        }
        let stop = server.stopper
        let watcher = SignalWatcher { number in
            Console.log("broker", "received signal \(number); shutting down")
            SystemdNotifier.notify("STOPPING=1")
            stop()
        }
        let reload = server.reloader
        let hangup = SignalWatcher([SIGHUP]) { _ in
            Console.log("broker", "received SIGHUP; reading the policy again")
            reload()
        }
        Console.log(
            "broker",
            "pid \(getpid()) serving control on \(server.controlEndpoints.joined(separator: ",")), bus on \(server.busEndpoints.joined(separator: ",")) (epoch \(server.epoch))"
        )
        if let address = server.metricsAddress {
            Console.log("broker", "Prometheus metrics on http://\(address)/metrics")
        }
        Console.out(
            "READY control=\(server.controlEndpoints.joined(separator: ",")) bus=\(server.busEndpoints.joined(separator: ","))"
        )
        SystemdNotifier.notify(
            "READY=1\nSTATUS=serving control on \(server.controlEndpoints.joined(separator: ","))")
        server.run()
        withExtendedLifetime((watcher, hangup)) {}
    }

    /// The group options, when `--group` is given; each is refused without it.
    private static func groupConfiguration(_ arguments: inout CommandLineArguments, insecure: Bool) throws
        -> GroupConfiguration?
    {
        let name = try arguments.option(Self.group)
        let member = try arguments.option(Self.member)
        let members = try arguments.option(Self.members)
        let etcd = try arguments.option(Self.etcd)
        let replicate = try arguments.option(Self.replicate)
        let advertise = try arguments.option(Self.advertise)
        let ttl = try arguments.integer(Self.leaseTTL, in: 1...60)
        let keys = try arguments.option(Self.groupKeys)
        guard let name else {
            if member != nil || members != nil || etcd != nil || replicate != nil || advertise != nil
                || ttl != nil || keys != nil
            {
                throw UsageError(
                    "--member, --members, --etcd, --replicate, --advertise, --lease-ttl and --group-keys need --group"
                )
            }
            return nil
        }
        if let problem = ServiceRegistration.nameProblem(name, what: "--group") { throw UsageError(problem) }
        guard let member, let members, let etcd else {
            throw UsageError("--group needs --member ID, --members ID,ID,… and --etcd URL")
        }
        let list = members.split(separator: ",").map(String.init)
        guard Set(list).count == list.count, !list.isEmpty else {
            throw UsageError("--members: '\(members)' names a member twice or none")
        }
        let urls = etcd.split(separator: ",").map(String.init)
        for url in urls where !url.hasPrefix("http://") {
            throw UsageError(
                "--etcd: '\(url)' is not an http:// URL (etcd's client URL, e.g. http://127.0.0.1:2379)")
        }
        let endpoint =
            try replicate.map { try BrokerEndpoints.parse($0, "--replicate")[0] } ?? "tcp://127.0.0.1:*"
        guard keys != nil || insecure else {
            throw UsageError(
                "--group needs --group-keys DIR, the members' CURVE keys (lifeline keys new \(list.joined(separator: " ")) --dir DIR), or --insecure: a plain-text group socket believes anyone who reaches it"
            )
        }
        var group = GroupConfiguration(
            name: name, member: member, members: list, etcd: urls, replicateEndpoint: endpoint)
        group.advertiseHost = advertise
        if let ttl { group.leaseSeconds = ttl }
        if let keys {
            do {
                group.keys = try GroupKeys.load(directory: keys, member: member, members: list)
            } catch {
                throw UsageError(error.message)
            }
        }
        return group
    }
}
