import Foundation
import Lifeline
import LifelineCLI
import LifelineSupport
import ZeroMQ

/// The replicated tier (issue 38 point 4): a three-member Lifeline group (a real etcd, majority
/// commit, the members' keys on the group socket) against a three-node JetStream cluster with an R3
/// stream, on loopback, doing the guaranteed tier's work.
extension GuaranteedTier {
    func lifelineGroup(_ group: ProcessGroup) throws -> System? {
        guard let etcd = PeerServer.executable("etcd") else {
            driver.progress(
                "guaranteed tier: etcd is not installed (apt-get install -y etcd-server): no lifeline group rows"
            )
            return nil
        }
        let url = "http://127.0.0.1:\(try PeerServer.freePort())"
        let peer = "http://127.0.0.1:\(try PeerServer.freePort())"
        _ = try start(
            group, "etcd", etcd,
            [
                "--name", "bench", "--data-dir", work.appendingPathComponent("etcd").path,
                "--listen-client-urls",
                url, "--advertise-client-urls", url, "--listen-peer-urls", peer,
                "--initial-advertise-peer-urls",
                peer, "--initial-cluster", "bench=\(peer)",
            ])
        try PeerServer.waitUntilListening("etcd") {
            let answer = try HTTPClient.post(
                url + "/v3/kv/range", body: Array(#"{"key":"AA=="}"#.utf8), timeout: .seconds(1))
            guard answer.status == 200 else { throw BenchError("etcd answered \(answer.status)") }
        }
        let keys = work.appendingPathComponent("group-keys")
        try FileManager.default.createDirectory(at: keys, withIntermediateDirectories: true)
        for name in ["a", "b", "c"] {
            let pair = try CurveKeyPair.generate()
            _ = try KeyFile.write(
                name: name, publicKey: pair.publicKey, secretKey: pair.secretKey, in: keys.path)
        }
        var members: [Child] = []
        for name in ["a", "b", "c"] {
            members.append(
                try start(
                    group, "member-\(name)", driver.binaries.appendingPathComponent("lifeline"),
                    [
                        "broker", "--group", "bench-guaranteed", "--member", name, "--members", "a,b,c",
                        "--etcd",
                        url, "--state-dir", work.appendingPathComponent("group-\(name)").path, "--control",
                        "tcp://127.0.0.1:*", "--bus", "tcp://127.0.0.1:*", "--replicate", "tcp://127.0.0.1:*",
                        "--group-keys", keys.path, "--journal-size", "10000000", "--journal-bytes",
                        "4294967296",
                    ]))
        }
        let (controls, leader) = try members.groupEndpoints()
        let record = work.appendingPathComponent("lifeline-group.record").path
        return System(
            name: "lifeline group", publisher: try LifelinePublisher(broker: leader), servers: members,
            startConsumer: consumer(
                group, "lifeline-consumer", ["--broker", controls.joined(separator: ","), "--record", record]),
            record: record)
    }

    func jetstreamCluster(_ group: ProcessGroup) throws -> System? {
        guard let executable = PeerServer.executable("nats-server") else {
            driver.progress(
                "guaranteed tier: nats-server is not installed (apt-get install -y nats-server): no JetStream R3 rows"
            )
            return nil
        }
        let clients = try (0..<3).map { _ in try PeerServer.freePort() }
        let routes = try (0..<3).map { _ in try PeerServer.freePort() }
        var servers: [Child] = []
        for index in 0..<3 {
            let others = (0..<3).filter { $0 != index }.map { "\"nats://127.0.0.1:\(routes[$0])\"" }
            let configuration = work.appendingPathComponent("jetstream-r3-\(index).conf")
            let text = """
                server_name: n\(index)
                listen: 127.0.0.1:\(clients[index])
                ping_interval: "60m"
                jetstream { store_dir: "\(work.appendingPathComponent("jetstream-r3-\(index)").path)" }
                cluster { name: bench, listen: 127.0.0.1:\(routes[index]), routes: [\(others.joined(separator: ", "))] }

                """
            try Data(text.utf8).write(to: configuration)
            servers.append(
                try start(group, "nats-server-r3-\(index)", executable, ["-c", configuration.path]))
        }
        for port in clients {
            try PeerServer.waitUntilListening("nats-server (R3)") {
                _ = try NATSConnection("127.0.0.1:\(port)")
            }
        }
        // The cluster elects its meta leader after the routes connect (a JetStream request before
        // that goes unanswered): the stream is created once a server's log says it has one.
        let deadline = Date().addingTimeInterval(30)
        while !(0..<3).contains(where: { index in
            let log = logs.appendingPathComponent("nats-server-r3-\(index).log")
            return ((try? String(contentsOf: log, encoding: .utf8)) ?? "").contains("metadata leader")
        }) {
            guard Date() < deadline else {
                throw BenchError("the JetStream cluster elected no leader in 30 s")
            }
            usleep(100_000)  // the servers' logs, read again until one names the leader or time is up
        }
        var publisher: JetStreamPublisher?
        while publisher == nil {
            do {
                publisher = try JetStreamPublisher(server: "127.0.0.1:\(clients[0])", replicas: 3)
            } catch {
                guard Date() < deadline else { throw error }
                usleep(200_000)  // the cluster is still electing; asked again until the deadline
            }
        }
        let record = work.appendingPathComponent("jetstream-r3.record").path
        return System(
            name: "jetstream R3", publisher: publisher!, servers: servers,
            startConsumer: consumer(
                group, "jetstream-consumer", ["--server", "127.0.0.1:\(clients[1])", "--record", record]),
            record: record)
    }
}
