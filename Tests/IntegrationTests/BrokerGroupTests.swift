import Foundation
import Lifeline
import LifelineProtocol
import Synchronization
import Testing

@Suite("Real processes: a broker group with etcd", .serialized, .timeLimit(.minutes(3)))
struct BrokerGroupTests {
    @Test("an unreachable etcd at start: exit 1, saying where it looked; group flags without --group: exit 2")
    func unreachableEtcd() async throws {
        let state = FileManager.default.temporaryDirectory.appendingPathComponent(
            "lifeline-group-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: state) }
        let url = "http://127.0.0.1:\(try EtcdProcess.freePort())"
        let result = try await CLIResult.run([
            "broker", "--group", "g", "--member", "a", "--members", "a,b,c", "--etcd", url, "--state-dir",
            state.path,
            "--control", "tcp://127.0.0.1:*", "--bus", "tcp://127.0.0.1:*",
        ])
        #expect(result.status == 1)
        #expect(result.errors.contains("no etcd answered at \(url)"), "\(result.errors)")
        let stray = try await CLIResult.run(["broker", "--member", "a"])
        #expect(stray.status == 2)
        #expect(stray.errors.contains("need --group"), "\(stray.errors)")
    }

    @Test(
        "a group registered with other members, and a state directory of another group: exit 1, saying which",
        .enabled(
            if: EtcdProcess.available, "etcd is not installed (deploy/test.sh installs etcd-server as root)"))
    func misconfigured() async throws {
        let etcd = try await EtcdProcess()
        defer { etcd.stop() }
        let state = FileManager.default.temporaryDirectory.appendingPathComponent(
            "lifeline-group-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: state) }
        let first = try await GroupMemberProcess(
            "a", group: "g", members: ["a", "b", "c"], etcd: etcd.url, state: state)
        defer { first.process.kill() }
        try await first.process.waitForLine(.stderr) { $0.contains("member a of group g") }
        let other = try await CLIResult.run([
            "broker", "--group", "g", "--member", "d", "--members", "a,b,d", "--etcd", etcd.url,
            "--state-dir",
            state.appendingPathComponent("d").path, "--control", "tcp://127.0.0.1:*", "--bus",
            "tcp://127.0.0.1:*",
        ])
        #expect(other.status == 1)
        #expect(other.errors.contains("registered in etcd with members a,b,c"), "\(other.errors)")
        let moved = try await CLIResult.run([
            "broker", "--group", "h", "--member", "a", "--members", "a,b,c", "--etcd", etcd.url,
            "--state-dir",
            state.appendingPathComponent("a").path, "--control", "tcp://127.0.0.1:*", "--bus",
            "tcp://127.0.0.1:*",
        ])
        #expect(moved.status == 1)
        #expect(moved.errors.contains("holds member 'a' of group 'g'"), "\(moved.errors)")
    }

    @Test(
        "the leader killed -9 while a publisher and a journaled service run: a standby takes over, the stream goes on in one epoch, each event handled once, in order",
        .enabled(
            if: EtcdProcess.available, "etcd is not installed (deploy/test.sh installs etcd-server as root)"))
    func failover() async throws {
        let kills = ChaosTests.setting("LIFELINE_GROUP_KILLS", 3)
        let total = ChaosTests.setting("LIFELINE_GROUP_EVENTS", 600)
        let etcd = try await EtcdProcess()
        defer { etcd.stop() }
        let state = FileManager.default.temporaryDirectory.appendingPathComponent(
            "lifeline-group-\(UUID().uuidString)")
        let journal = FileManager.default.temporaryDirectory.appendingPathComponent(
            "lifeline-probe-\(UUID().uuidString).journal")
        defer {
            try? FileManager.default.removeItem(at: state)
            try? FileManager.default.removeItem(at: journal)
        }
        let names = ["a", "b", "c"]
        var members: [GroupMemberProcess] = []
        for name in names {
            members.append(
                try await GroupMemberProcess(
                    name, group: "demo", members: names, etcd: etcd.url, state: state,
                    extra: ["--journal-size", "\(max(20_000, total))"]))
        }
        defer { for member in members { member.process.kill() } }
        try await Self.showingLogs(of: members, nil) {
            try await LifecycleSemanticsTests.poll(seconds: 30) {
                // Early elections may have come and gone: each member's last word counts.
                members.filter { $0.role == "READY" }.count == 1
                    && members.filter { $0.role == "STANDBY" }.count == 2
            }
        }
        let brokers = members.map(\.control).joined(separator: ",")
        let probe = try ChildProcess(
            "lifeline-probe",
            [
                "--broker", brokers, "--name", "counter", "--events", "test.tick", "--journal", journal.path,
                "--heartbeat-interval", "200", "--liveness", "2",
            ])
        defer { probe.kill() }
        try await probe.waitForLine(startingWith: "READY service=", seconds: 30)
        let client = LifelineClient(broker: brokers)
        let published = Atomic<Int>(0)
        let publisher = Task {
            for n in 1...total {
                try await client.publish("test.tick", ["n": .int(Int64(n))], timeout: .seconds(60))
                published.store(n, ordering: .relaxed)
            }
        }
        var takeovers: [Double] = []
        for kill in 1...kills {
            try await LifecycleSemanticsTests.poll(seconds: 120) {
                published.load(ordering: .relaxed) >= total * kill / (kills + 1)
            }
            guard let leader = members.first(where: { $0.role == "READY" }) else {
                Issue.record("no member leads before kill \(kill)")
                break
            }
            let before = published.load(ordering: .relaxed)
            let killed = ContinuousClock.now
            leader.process.kill(SIGKILL)
            // The publish in flight at the kill may have been answered by the old leader: the
            // second after it was sent to the new one.
            try await Self.showingLogs(of: members, probe) {
                try await LifecycleSemanticsTests.poll(seconds: 30) {
                    published.load(ordering: .relaxed) >= before + 2
                }
            }
            let seconds =
                Double((ContinuousClock.now - killed).components.attoseconds) / 1e18
                + Double((ContinuousClock.now - killed).components.seconds)
            takeovers.append(seconds)
            print(
                "group: killed leader \(leader.name) after \(before) events; the next publish was accepted \(String(format: "%.2f", seconds)) s later"
            )
            try await leader.restart()
            // Back as a standby, or the leader again (it may win the key; it then takes the
            // furthest copy of a majority).
            try await Self.showingLogs(of: members, probe) {
                try await LifecycleSemanticsTests.poll(seconds: 30) {
                    leader.process.lines().contains { $0.hasPrefix("STANDBY ") || $0.hasPrefix("READY ") }
                }
            }
        }
        try await publisher.value
        try await probe.waitForLine(seconds: 120) { $0.contains("\"n\":\(total)") }
        probe.kill(SIGTERM)
        _ = try await probe.waitForExit()
        let (handled, lost, duplicated, outOfOrder) = try ChaosTests.tally(journal, total: total)
        let sorted = takeovers.sorted()
        print(
            "group failover: \(total) events, \(kills) leader kills: handled \(handled.count), lost \(lost), duplicated \(duplicated), out of order \(outOfOrder); kill → next accepted publish p50 \(String(format: "%.2f", sorted[sorted.count / 2])) s, max \(String(format: "%.2f", sorted.last ?? 0)) s"
        )
        #expect(lost == 0 && duplicated == 0 && outOfOrder == 0)
        #expect(handled == (1...Int64(total)).map { $0 }, "every event exactly once, in order")
        await client.close()
    }

    /// Runs `body`; when it throws, prints the last log lines of the members and the service first.
    static func showingLogs(
        of members: [GroupMemberProcess], _ service: ChildProcess?, _ body: () async throws -> Void
    ) async throws {
        do {
            try await body()
        } catch {
            for member in members {
                print(
                    "member \(member.name):\n"
                        + member.process.lines(.stderr).suffix(30).joined(separator: "\n"))
            }
            if let service { print("service:\n" + service.lines(.stderr).suffix(30).joined(separator: "\n")) }
            throw error
        }
    }

}
