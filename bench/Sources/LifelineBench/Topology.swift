import Foundation
import Lifeline
import LifelineCLI
import LifelineProtocol
import LifelineSupport
import ZeroMQ

/// Every process and socket of one transport's run: the Lifeline broker and services, and the raw
/// libzmq baselines (an XSUB/XPUB zmq_proxy with subscribers that also listen to a direct PUB, a
/// ROUTER echo, a ROUTER/DEALER zmq_proxy with an echo worker).
final class BenchTopology {
    static let maximumFanout = 16
    let transport: String
    private let group: ProcessGroup
    /// The processes of each system, for CPU accounting: broker/relay and subscribers.
    private(set) var roles: [String: [Child]] = [:]
    let client: BlockingClient
    /// A client of the CURVE broker (nil without `curve`).
    private(set) var secureClient: BlockingClient?
    /// A client of a broker group's leader (nil without `group`, or without etcd).
    private(set) var groupClient: BlockingClient?
    /// The control endpoint of the group's leader (nil without a group).
    private(set) var groupLeader: String?
    let brokerControl: String
    let proxyPub: ZMQSocket
    let directPub: ZMQSocket
    let echoDealer: ZMQSocket
    let proxiedDealer: ZMQSocket
    /// The peers, when their servers are installed: a NATS publisher, a NATS requester (subscribed to
    /// its reply subject), a Redis publisher.
    private(set) var nats: NATSConnection?
    private(set) var natsRequester: NATSConnection?
    private(set) var redis: RedisConnection?
    /// Why a peer's rows are missing.
    private(set) var skipped: [String] = []
    /// The reply subject of the NATS requests.
    static let natsInbox = Array("_INBOX.bench".utf8)

    init(
        transport: String, fanouts: [Int], binaries: URL, work: URL, ackEndpoint: String, durable: Bool,
        curve: Bool, group runsGroup: Bool
    ) throws {
        self.transport = transport
        let logs = work.appendingPathComponent("logs-\(transport)")
        try FileManager.default.createDirectory(at: logs, withIntermediateDirectories: true)
        func endpoint(_ name: String) -> String {
            transport == "ipc" ? "ipc://\(work.path)/\(name)" : "tcp://127.0.0.1:*"
        }
        let group = ProcessGroup()
        self.group = group
        var started: [Child] = []
        func start(_ name: String, _ executable: String, _ arguments: [String]) throws -> [String: String] {
            do {
                let child = try Child(
                    name, executable: binaries.appendingPathComponent(executable), arguments: arguments,
                    logDirectory: logs)
                group.children.append(child)
                started.append(child)
                return try child.waitForReady()
            } catch {
                group.stop()
                throw error
            }
        }
        let count = fanouts.max() ?? 1
        func topics(_ prefix: String, for index: Int) -> String {
            fanouts.filter { index < $0 }.map { "\(prefix).n\($0)" }.joined(separator: ",")
        }

        let broker = try start(
            "broker", "lifeline",
            ["broker", "--control", endpoint("control"), "--bus", endpoint("bus"), "--bus-hwm", "0"]
                + (durable ? ["--state-dir", work.appendingPathComponent("state-\(transport)").path] : []))
        brokerControl = broker["control"] ?? ""
        for index in 0..<count {
            _ = try start(
                "service-\(index)", "lifeline-bench",
                [
                    "service", "--broker", brokerControl, "--index", "\(index)", "--ack", ackEndpoint,
                    "--events", topics("bench", for: index), "--pool-events", topics("pool", for: index),
                    "--typed-events", topics("typed", for: index),
                ])
        }

        let context = ZMQContext.shared
        directPub = try ZMQSocket(context, type: .pub)
        try directPub.set(.sendHighWaterMark, 0)
        try directPub.bind(endpoint("direct"))
        let pubsub = try start(
            "proxy-pubsub", "lifeline-bench",
            ["proxy", "--kind", "pubsub", "--frontend", endpoint("xsub"), "--backend", endpoint("xpub")])
        for index in 0..<count {
            _ = try start(
                "subscriber-\(index)", "lifeline-bench",
                [
                    "subscriber", "--index", "\(100 + index)", "--ack", ackEndpoint,
                    "--connect", "\(pubsub["backend"] ?? ""),\(try directPub.lastEndpoint())",
                    "--topics", topics("bench", for: index) + "," + topics("direct", for: index),
                ])
        }
        roles["lifeline broker"] = [started[0]]
        roles["lifeline subscribers"] = Array(started[1...count])
        roles["zmq_proxy broker"] = [started[count + 1]]
        roles["zmq subscribers"] = Array(started[(count + 2)...])
        // Actors by key: one process hosting EchoActor by key, for the call rows.
        _ = try start("service-keyed", "lifeline-bench", ["service", "--broker", brokerControl, "--keyed"])
        proxyPub = try ZMQSocket(context, type: .pub)
        try proxyPub.set(.sendHighWaterMark, 0)
        try proxyPub.connect(pubsub["frontend"] ?? "")

        let echo = try start("echo", "lifeline-bench", ["echo", "--bind", endpoint("echo")])
        echoDealer = try ZMQSocket(context, type: .dealer)
        try echoDealer.connect(echo["echo"] ?? "")
        let reqrep = try start(
            "proxy-reqrep", "lifeline-bench",
            ["proxy", "--kind", "reqrep", "--frontend", endpoint("router"), "--backend", endpoint("dealer")])
        _ = try start("worker", "lifeline-bench", ["worker", "--connect", reqrep["backend"] ?? ""])
        proxiedDealer = try ZMQSocket(context, type: .dealer)
        try proxiedDealer.connect(reqrep["frontend"] ?? "")

        client = try BlockingClient(broker: brokerControl, credentials: nil)

        // NATS (TCP only: nats-server has no Unix socket) and Redis (a Unix socket for the ipc run),
        // each with the same number of subscriber processes.
        func startServer(_ name: String, _ executable: URL, _ arguments: [String]) throws -> Child {
            let child = try Child(name, executable: executable, arguments: arguments, logDirectory: logs)
            group.children.append(child)
            return child
        }
        /// One `<peer>-subscriber` process per subscriber, acking as subscriber `base + i`.
        func startSubscribers(_ peer: String, numberedFrom base: Int, server: String) throws -> [Child] {
            let first = started.count
            for index in 0..<count {
                _ = try start(
                    "\(peer)-subscriber-\(index)", "lifeline-bench",
                    [
                        "\(peer)-subscriber", "--index", "\(base + index)", "--ack", ackEndpoint, "--server",
                        server,
                        "--topics", topics("bench", for: index),
                    ])
            }
            return Array(started[first...])
        }
        if let executable = PeerServer.executable("nats-server") {
            let address = "127.0.0.1:\(try PeerServer.freePort())"
            // The driver's publisher and requester read nothing while other systems are measured: at
            // the default 2 min ping interval the server would close them as stale within a full run.
            let configuration = work.appendingPathComponent("nats-\(transport).conf")
            try Data("ping_interval: \"60m\"\n".utf8).write(to: configuration)
            let server = try startServer(
                "nats-server", executable,
                ["-a", "127.0.0.1", "-p", String(address.split(separator: ":")[1]), "-c", configuration.path])
            try PeerServer.waitUntilListening("nats-server") { _ = try NATSConnection(address) }
            roles["nats server"] = [server]
            roles["nats subscribers"] = try startSubscribers("nats", numberedFrom: 300, server: address)
            _ = try start("nats-responder", "lifeline-bench", ["nats-responder", "--server", address])
            nats = try NATSConnection(address)
            let requester = try NATSConnection(address)
            requester.subscribe(String(decoding: Self.natsInbox, as: UTF8.self), sid: 1)
            try requester.ping()
            natsRequester = requester
        } else {
            skipped.append("nats-server is not installed (apt-get install -y nats-server): no NATS rows")
        }
        if let executable = PeerServer.executable("redis-server") {
            let socketPath = work.appendingPathComponent("redis-\(transport).sock").path
            let port = try PeerServer.freePort()
            let address = transport == "ipc" ? socketPath : "127.0.0.1:\(port)"
            let server = try startServer(
                "redis-server", executable,
                [
                    "--bind", "127.0.0.1", "--port", transport == "ipc" ? "0" : "\(port)", "--save", "",
                    "--appendonly", "no",
                ] + (transport == "ipc" ? ["--unixsocket", socketPath, "--unixsocketperm", "700"] : []))
            try PeerServer.waitUntilListening("redis-server") { _ = try RedisConnection(address) }
            roles["redis server"] = [server]
            roles["redis subscribers"] = try startSubscribers("redis", numberedFrom: 400, server: address)
            redis = try RedisConnection(address)
        } else {
            skipped.append("redis-server is not installed (apt-get install -y redis-server): no Redis rows")
        }

        if runsGroup {
            if let etcd = PeerServer.executable("etcd") {
                // A real etcd and three members on loopback, each with its state directory (a group is
                // always durable: compare with a `--durable` single broker), one subscriber service.
                let url = "http://127.0.0.1:\(try PeerServer.freePort())"
                let peer = "http://127.0.0.1:\(try PeerServer.freePort())"
                _ = try startServer(
                    "etcd", etcd,
                    [
                        "--name", "bench", "--data-dir",
                        work.appendingPathComponent("etcd-\(transport)").path,
                        "--listen-client-urls", url, "--advertise-client-urls", url, "--listen-peer-urls",
                        peer,
                        "--initial-advertise-peer-urls", peer, "--initial-cluster", "bench=\(peer)",
                    ])
                try PeerServer.waitUntilListening("etcd") {
                    let answer = try HTTPClient.post(
                        url + "/v3/kv/range", body: Array(#"{"key":"AA=="}"#.utf8), timeout: .seconds(1))
                    guard answer.status == 200 else { throw BenchError("etcd answered \(answer.status)") }
                }
                // The members' keys, as a group runs for real: the group socket speaks CURVE.
                let keys = work.appendingPathComponent("group-keys-\(transport)")
                try? FileManager.default.createDirectory(at: keys, withIntermediateDirectories: true)
                for name in ["a", "b", "c"] {
                    let pair = try CurveKeyPair.generate()
                    for file in ["\(name).key", "\(name).pub"] {
                        try? FileManager.default.removeItem(at: keys.appendingPathComponent(file))
                    }
                    _ = try KeyFile.write(
                        name: name, publicKey: pair.publicKey, secretKey: pair.secretKey, in: keys.path)
                }
                var members: [Child] = []
                for name in ["a", "b", "c"] {
                    let member = try startServer(
                        "member-\(name)", binaries.appendingPathComponent("lifeline"),
                        [
                            "broker", "--group", "bench-\(transport)", "--member", name, "--members", "a,b,c",
                            "--etcd", url, "--state-dir",
                            work.appendingPathComponent("group-\(transport)-\(name)").path, "--control",
                            endpoint("control-\(name)"), "--bus", endpoint("bus-\(name)"), "--replicate",
                            endpoint("group-\(name)"), "--bus-hwm", "0", "--group-keys", keys.path,
                        ])
                    members.append(member)
                }
                let (controls, leader) = try members.groupEndpoints()
                roles["lifeline group broker"] = members
                let firstService = started.count
                _ = try start(
                    "service-group", "lifeline-bench",
                    [
                        "service", "--broker", controls.joined(separator: ","), "--index", "500", "--ack",
                        ackEndpoint, "--events", "bench.n1",
                    ])
                roles["lifeline group subscribers"] = Array(started[firstService...])
                // Straight to the leader, as the single broker's client: only the replication differs.
                groupClient = try BlockingClient(broker: leader, credentials: nil)
                groupLeader = leader
            } else {
                skipped.append("etcd is not installed (apt-get install -y etcd-server): no group rows")
            }
        }

        guard curve else { return }
        // The same broker and services again, with CURVE on both sockets and a policy (so the ZAP
        // handler checks every handshake): one key pair for all of them, granted everything.
        let keys = work.appendingPathComponent("keys-\(transport)")
        try FileManager.default.createDirectory(at: keys, withIntermediateDirectories: true)
        for name in ["broker", "bench"] {
            let pair = try CurveKeyPair.generate()
            _ = try KeyFile.write(
                name: name, publicKey: pair.publicKey, secretKey: pair.secretKey, in: keys.path)
        }
        let policy = keys.appendingPathComponent("policy.json")
        try Data(
            JSONWriter.encode([
                "keys": [
                    "bench": [
                        "publicKeyFile": "bench.pub", "register": ["*"], "publish": ["*"], "subscribe": ["*"],
                        "call": ["*"], "admin": true,
                    ]
                ]
            ])
        ).write(to: policy)
        let keyArguments = [
            "--key", keys.appendingPathComponent("bench.key").path, "--broker-key",
            keys.appendingPathComponent("broker.pub").path,
        ]
        let firstSecure = started.count
        let secureBroker = try start(
            "broker-curve", "lifeline",
            [
                "broker", "--control", endpoint("control-curve"), "--bus", endpoint("bus-curve"), "--bus-hwm",
                "0",
                "--key", keys.appendingPathComponent("broker.key").path, "--policy", policy.path,
            ])
        for index in 0..<count {
            _ = try start(
                "service-curve-\(index)", "lifeline-bench",
                [
                    "service", "--broker", secureBroker["control"] ?? "", "--index", "\(200 + index)",
                    "--ack",
                    ackEndpoint, "--events", topics("bench", for: index),
                ] + keyArguments)
        }
        roles["lifeline+curve broker"] = [started[firstSecure]]
        roles["lifeline+curve subscribers"] = Array(started[(firstSecure + 1)...])
        secureClient = try BlockingClient(
            broker: secureBroker["control"] ?? "",
            credentials: LifelineClient.Credentials(
                keyFile: keys.appendingPathComponent("bench.key").path,
                brokerKey: keys.appendingPathComponent("broker.pub").path))
    }

    func stop() { group.stop() }

    /// CPU used so far by a role's processes, in microseconds.
    func cpu(_ role: String, first count: Int = .max) -> Double {
        (roles[role] ?? []).prefix(count).reduce(0) { $0 + $1.cpuMicroseconds }
    }
}

/// The processes of a topology, stopped in reverse order of their start.
final class ProcessGroup {
    var children: [Child] = []

    func stop() {
        for child in children.reversed() { child.stop() }
        children.removeAll()
    }
}
