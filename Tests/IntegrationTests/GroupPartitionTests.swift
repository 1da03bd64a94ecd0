import Foundation
import LifelineBroker
import LifelineProtocol
import Synchronization
import Testing

@Suite(
    "Real processes: a broker group cut by a partition", .serialized, .timeLimit(.minutes(3)),
    .enabled(
        if: EtcdProcess.available && NetworkHosts.available,
        "needs etcd (deploy/test.sh installs etcd-server as root), root and iproute2 for network namespaces"))
struct GroupPartitionTests {
    /// The members' lease TTL (GroupMemberProcess's `--lease-ttl`).
    static let leaseTTL: Duration = .seconds(2)

    @Test(
        "the leader cut from etcd and the standbys while a client on its host still reaches it: it stops accepting within the lease TTL, a standby takes over, the journals never hold different events under one sequence, nothing acknowledged is lost"
    )
    func partition() async throws {
        let star = try NetworkStar(hosts: 3)
        defer { star.remove() }
        let etcd = try await EtcdProcess(star: star)
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
        for (index, name) in names.enumerated() {
            members.append(
                try await GroupMemberProcess(
                    name, group: "cut", members: names, etcd: etcd.url, state: state, star: star, host: index)
            )
        }
        defer { for member in members { member.process.kill() } }
        let all = members
        try await LifecycleSemanticsTests.poll(seconds: 30) {
            all.filter { $0.role == "READY" }.count == 1 && all.filter { $0.role == "STANDBY" }.count == 2
        }
        let cutIndex = try #require(members.firstIndex { $0.role == "READY" })
        let old = members[cutIndex]
        let others = members.filter { $0 !== old }
        let probe = try star.process(
            in: star.hub, "lifeline-probe",
            [
                "--broker", members.map(\.control).joined(separator: ","), "--name", "counter", "--events",
                "test.tick", "--journal", journal.path, "--heartbeat-interval", "200", "--liveness", "2",
            ])
        defer { probe.kill() }
        try await probe.waitForLine(startingWith: "READY service=", seconds: 30)
        // One client on the leader's host, speaking to it over that host's loopback only; one on
        // the switch, given the other two members.
        let inside = CLIPublisher(star, namespace: star.hosts[cutIndex], brokers: old.localControl, first: 1)
        let outside = CLIPublisher(
            star, namespace: star.hub, brokers: others.map(\.control).joined(separator: ","), first: 1_000_001
        )
        let publishers = [inside, outside].map { publisher in Task { try await publisher.run() } }
        try await LifecycleSemanticsTests.poll(seconds: 30) {
            inside.accepted.count >= 3 && outside.accepted.count >= 3
        }

        try star.setLink(host: cutIndex, up: false)
        let cut = ContinuousClock.now
        print("partition: cut leader \(old.name) from etcd and the standbys")
        var stopped: Duration?
        var takenOver: Duration?
        try await GroupRig.showingLogs(of: members, services: [("service", probe)]) {
            try await LifecycleSemanticsTests.poll(seconds: 30) {
                if stopped == nil,
                    old.process.lines(.stderr).contains(where: { $0.contains("stopped leading") })
                {
                    stopped = ContinuousClock.now - cut
                }
                if takenOver == nil, outside.accepted.contains(where: { $0.started > cut }) {
                    takenOver = ContinuousClock.now - cut
                }
                // The old leader's host keeps trying beyond the TTL, so that a late acceptance would show.
                return stopped != nil && takenOver != nil
                    && inside.attempts.contains { $0.started > cut + Self.leaseTTL + .milliseconds(500) }
            }
        }
        let oldJournal = JournalContents.events(
            atPath: old.directory.appendingPathComponent("journal.log").path)
        let lateInside = inside.accepted.filter { $0.started > cut + Self.leaseTTL }
        let lastInside = inside.accepted.filter { $0.started < cut + Self.leaseTTL }.map(\.finished).max()
        print(
            "partition: the old leader stopped leading \(Self.text(stopped!)) after the cut (lease TTL \(Self.text(Self.leaseTTL))); its host's last publish it accepted was answered \(lastInside.map { $0 < cut ? "before the cut" : "\(Self.text($0 - cut)) after it" } ?? "never"); the other side's first publish was accepted \(Self.text(takenOver!)) after it"
        )
        #expect(lateInside.isEmpty, "the cut leader accepted nothing once its lease could have expired")

        // Healed, the old leader stands by again, or — when the new leader's lease lapsed meanwhile
        // (a loaded host) — wins a later term itself: either way it has a role line newer than the
        // cut, and its host's publishes are accepted again.
        let roleLines = {
            old.process.lines().filter { $0.hasPrefix("STANDBY ") || $0.hasPrefix("READY ") }.count
        }
        let rolesBefore = roleLines()
        try star.setLink(host: cutIndex, up: true)
        let healed = ContinuousClock.now
        try await GroupRig.showingLogs(of: members, services: [("service", probe)]) {
            try await LifecycleSemanticsTests.poll(seconds: 30) {
                roleLines() > rolesBefore && inside.accepted.contains { $0.started > healed }
            }
        }
        print(
            "partition: healed; \(old.name) is \(old.role == "READY" ? "leading again under a later term" : "standing by again") and its host's publishes are accepted"
        )
        inside.stop()
        outside.stop()
        for publisher in publishers { try await publisher.value }

        let leader = try #require(members.first { $0.role == "READY" })
        let newJournal = JournalContents.events(
            atPath: leader.directory.appendingPathComponent("journal.log").path)
        let bySequence = Dictionary(
            newJournal.map { ("\($0.header.epoch):\($0.header.sequence)", $0) }, uniquingKeysWith: { $1 })
        let differing = oldJournal.filter { event in
            guard let other = bySequence["\(event.header.epoch):\(event.header.sequence)"] else {
                return false
            }
            return other.name != event.name || other.payload != event.payload
        }
        let missing = oldJournal.filter { bySequence["\($0.header.epoch):\($0.header.sequence)"] == nil }
        print(
            "partition: old leader's journal \(oldJournal.count) events, new leader's \(newJournal.count): \(differing.count) differ under one sequence, \(missing.count) of the old missing from the new"
        )
        #expect(differing.isEmpty, "no sequence holds different events")
        #expect(missing.isEmpty, "what the old leader committed is in the new leader's journal")
        #expect(Set(bySequence.keys).count == newJournal.count, "one event per sequence")

        let accepted = inside.accepted.map(\.n) + outside.accepted.map(\.n)
        let highest = accepted.max() ?? 0
        try await probe.waitForLine(seconds: 60) { $0.contains("\"n\":\(highest)") }
        try await LifecycleSemanticsTests.poll(seconds: 30) {
            let handled = Set(
                ((try? String(contentsOf: journal, encoding: .utf8)) ?? "").split(separator: "\n"))
            return accepted.allSatisfy { n in handled.contains { $0.hasSuffix("{\"n\":\(n)}") } }
        }
        probe.kill(SIGTERM)
        _ = try await probe.waitForExit()
        let handled = try String(contentsOf: journal, encoding: .utf8).split(separator: "\n").map { line in
            try JSONParser.parse(String(line.split(separator: " ", maxSplits: 2)[2]))["n"]?.intValue ?? -1
        }
        let lost = Set(accepted.map(Int64.init)).subtracting(handled)
        let duplicated = Dictionary(grouping: handled, by: { $0 }).values.filter { $0.count > 1 }.count
        let outOfOrder = [handled.filter { $0 < 1_000_001 }, handled.filter { $0 >= 1_000_001 }].map { run in
            zip(run, run.dropFirst()).filter { $0 >= $1 }.count
        }.reduce(0, +)
        print(
            "partition: \(inside.accepted.count) + \(outside.accepted.count) publishes accepted (\(inside.attempts.count + outside.attempts.count) tried); the service handled \(handled.count): lost \(lost.count), duplicated \(duplicated), out of order \(outOfOrder)"
        )
        #expect(lost.isEmpty && duplicated == 0 && outOfOrder == 0)
    }

    /// `duration` in milliseconds, for the printed figures.
    static func text(_ duration: Duration) -> String {
        "\(duration.components.seconds * 1000 + duration.components.attoseconds / 1_000_000_000_000_000) ms"
    }
}

/// Publishes `test.tick` with `n` = first, first + 1, … from a namespace of a ``NetworkStar``, one
/// `lifeline publish` at a time, until stopped; keeps when each attempt started and ended and
/// whether it was accepted. A number is used once: a failed attempt is not repeated.
final class CLIPublisher: Sendable {
    struct Attempt: Sendable {
        let n: Int
        let started: ContinuousClock.Instant
        let finished: ContinuousClock.Instant
        let accepted: Bool
    }

    private let star: NetworkStar
    private let namespace: String
    private let brokers: String
    private let first: Int
    private let record = Mutex<[Attempt]>([])
    private let stopping = Atomic<Bool>(false)

    init(_ star: NetworkStar, namespace: String, brokers: String, first: Int) {
        self.star = star
        self.namespace = namespace
        self.brokers = brokers
        self.first = first
    }

    var attempts: [Attempt] { record.withLock { $0 } }
    var accepted: [Attempt] { attempts.filter(\.accepted) }

    func stop() { stopping.store(true, ordering: .relaxed) }

    func run() async throws {
        var n = first
        while !stopping.load(ordering: .relaxed) {
            let started = ContinuousClock.now
            let child = try star.process(
                in: namespace, "lifeline",
                ["publish", "test.tick", "n:=\(n)", "--broker", brokers, "--timeout", "500ms", "--json"])
            let status = try await child.waitForExit(seconds: 30)
            let attempt = Attempt(n: n, started: started, finished: .now, accepted: status == 0)
            record.withLock { $0.append(attempt) }
            n += 1
        }
    }
}
