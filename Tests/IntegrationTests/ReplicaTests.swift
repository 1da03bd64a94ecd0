import Foundation
import Lifeline
import LifelineProtocol
import Synchronization
import Testing

@Suite("Real processes: several instances of one service", .serialized, .timeLimit(.minutes(3)))
struct ReplicaTests {
    static let instanceArguments = [
        "--name", "pay", "--replicable", "--idempotent", "whoami,sleep", "--events", "com.example.paid",
        "--shared", "com.example.paid",
    ]

    /// A journal file for probes to share.
    static func journalFile() -> URL {
        FileManager.default.temporaryDirectory.appendingPathComponent(
            "lifeline-probe-\(UUID().uuidString).journal")
    }

    /// The sequences of the `com.example.paid` events a probe journal holds, in handling order.
    static func handled(in journal: URL) -> [UInt64] {
        let text = (try? String(contentsOf: journal, encoding: .utf8)) ?? ""
        return text.split(separator: "\n").compactMap { line in
            let fields = line.split(separator: " ", maxSplits: 2)
            guard fields.count == 3, fields[1] == "com.example.paid" else { return nil }
            return fields[0].split(separator: ":").last.flatMap { UInt64($0) }
        }
    }

    @Test("three instances of one name: listed once with their count, each on its own; calls taken in turn")
    func instances() async throws {
        let broker = try await BrokerProcess()
        defer { broker.process.kill() }
        var instances: [ChildProcess] = []
        defer { for instance in instances { instance.kill() } }
        for _ in 0..<3 {
            instances.append(try await broker.service("lifeline-probe", Self.instanceArguments))
        }
        let table = try await broker.cli(["services"])
        #expect(table.stdout.count == 2, "one row for the name: \(table.stdout)")
        #expect(
            table.stdout.last?.split(separator: " ", omittingEmptySubsequences: true).prefix(2) == [
                "pay", "3",
            ])
        let rows = try await broker.cli(["services", "--instances"])
        #expect(rows.stdout.count == 4, "a row per instance: \(rows.stdout)")
        let lookup = try await broker.cli(["lookup", "pay", "--json"])
        let record = try ServiceRecord(json: try JSONParser.parse(lookup.output))
        #expect(Set(record.instances.map(\.pid)) == Set(instances.map { Int($0.process.processIdentifier) }))

        let client = LifelineClient(broker: broker.control)
        var answeredBy: [Int64: Int] = [:]
        for _ in 0..<30 {
            let reply = try await client.call("pay", "whoami")
            answeredBy[reply["pid"]?.intValue ?? 0, default: 0] += 1
        }
        #expect(answeredBy.values.sorted() == [10, 10, 10], "one call after another: each instance in turn")
        // A differing instance is refused with the difference, and the process says so.
        let odd = try ChildProcess(
            "lifeline-probe",
            [
                "--broker", broker.control, "--name", "pay", "--replicable", "--idempotent", "whoami",
                "--events",
                "com.example.paid",
            ])
        defer { odd.kill() }
        let refusal = try await odd.waitForLine(.stderr) { $0.contains("may not be an instance of 'pay'") }
        #expect(refusal.contains("its idempotent methods differ: this one has no sleep"), "\(refusal)")
        #expect(try await odd.waitForExit(seconds: 20) == 1, "a refused instance stops, saying why")
        await client.close()
    }

    @Test(
        "instances killed -9 in turn under a call loop and a shared event stream, and restarted: no idempotent call fails; the others are answered or fail 503 at once, none at its deadline; every shared event is handled once (the instances share a journal, so one sent again after a death before its ACK is skipped)"
    )
    func killedUnderCalls() async throws {
        let kills = ChaosTests.setting("LIFELINE_REPLICA_KILLS", 6)
        // The instances share one journal: a shared event sent again is not handled twice.
        let journal = Self.journalFile()
        defer { try? FileManager.default.removeItem(at: journal) }
        let arguments = Self.instanceArguments + ["--journal", journal.path]
        let broker = try await BrokerProcess()
        defer { broker.process.kill() }
        let running = Mutex<[ChildProcess]>([])
        defer { running.withLock { for instance in $0 { instance.kill() } } }
        for _ in 0..<3 {
            let instance = try await broker.service("lifeline-probe", arguments)
            running.withLock { $0.append(instance) }
        }
        let stream = SharedStream(broker: broker.control)
        let publisher = Task { await stream.run() }
        let client = LifelineClient(broker: broker.control)
        let tally = ReplicaCallTally()
        let loops = (0..<4).map { loop in
            Task { await tally.loop(client, idempotent: loop % 2 == 0) }
        }
        // bench/replicas.sh: one kill every LIFELINE_REPLICA_INTERVAL_MS; here: after 20 more answers.
        let interval = ChaosTests.setting("LIFELINE_REPLICA_INTERVAL_MS", 0)
        for round in 0..<kills {
            let answered = tally.answered
            if interval > 0 {
                // The chaos script's pace, not a wait for a condition.
                try await Task.sleep(for: .milliseconds(interval))
            } else {
                try await LifecycleSemanticsTests.poll(seconds: 60) { tally.answered >= answered + 20 }
            }
            let victim = running.withLock { $0.remove(at: round % $0.count) }
            victim.kill(SIGKILL)
            let restarted = try await broker.service("lifeline-probe", arguments)
            running.withLock { $0.append(restarted) }
        }
        let answered = tally.answered
        try await LifecycleSemanticsTests.poll(seconds: 60) { tally.answered >= answered + 20 }
        tally.stop()
        for loop in loops { await loop.value }
        stream.stop()
        await publisher.value
        let published = stream.sequences
        func handled() -> [UInt64] { Self.handled(in: journal) }
        try await LifecycleSemanticsTests.poll(seconds: 60) { Set(handled()).isSuperset(of: published) }
        let seen = handled()
        let duplicates = seen.count - Set(seen).count
        print(
            "replicas: shared stream of \(published.count) events under \(kills) kills: handled \(Set(seen).count), lost \(Set(published).subtracting(seen).count), handled twice \(duplicates)"
        )
        #expect(stream.failures.isEmpty, "\(stream.failures)")
        #expect(duplicates == 0, "the shared journal turns a redelivery into a skip")
        let result = tally.result
        print(
            "replicas: \(kills) instances killed -9 under 4 call loops: idempotent answered \(result.idempotent), failed \(result.idempotentFailed.count); others answered \(result.other), unavailable \(result.unavailable), other failures \(result.late.count)"
        )
        #expect(result.idempotentFailed.isEmpty, "\(result.idempotentFailed)")
        #expect(result.late.isEmpty, "only 503 at once, never a deadline: \(result.late)")
        #expect(result.idempotent > 0 && result.other > 0)
        await client.close()
    }
    @Test(
        "the broker killed -9 twice under a shared event stream and restarted on its state directory: every acknowledged shared event handled, none lost"
    )
    func brokerRestarts() async throws {
        let state = FileManager.default.temporaryDirectory.appendingPathComponent(
            "lifeline-state-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: state) }
        let journal = Self.journalFile()
        defer { try? FileManager.default.removeItem(at: journal) }
        let brokerArguments = ["--state-dir", state.path]
        var broker = try await BrokerProcess(brokerArguments)
        let (control, bus) = (broker.control, broker.bus)
        var instances: [ChildProcess] = []
        defer { for instance in instances { instance.kill() } }
        for _ in 0..<2 {
            instances.append(
                try await broker.service(
                    "lifeline-probe", Self.instanceArguments + ["--journal", journal.path]))
        }
        let stream = SharedStream(broker: control)
        let publisher = Task { await stream.run() }
        /// Waits for 100 more publications; says what the stream and the broker said if none come.
        func hundredMore() async throws {
            let before = stream.sequences.count
            do {
                try await LifecycleSemanticsTests.poll(seconds: 60) { stream.sequences.count >= before + 100 }
            } catch {
                Issue.record(
                    "\(stream.sequences.count - before) publications in 60 s; failures \(stream.failures.suffix(3)); broker: \(broker.process.lines(.stderr).suffix(20))"
                )
                throw error
            }
        }
        for _ in 0..<2 {
            try await hundredMore()
            broker.process.kill(SIGKILL)
            _ = try await broker.process.waitForExit()
            broker = try await BrokerProcess(control: control, bus: bus, brokerArguments)
            try await broker.process.waitForLine(.stderr) {
                $0.contains("restored the shared-event position")
            }
        }
        try await hundredMore()
        stream.stop()
        await publisher.value
        defer { broker.process.kill() }
        let published = Set(stream.sequences)
        func handled() -> [UInt64] { Self.handled(in: journal) }
        do {
            try await LifecycleSemanticsTests.poll(seconds: 60) { Set(handled()).isSuperset(of: published) }
        } catch {
            Issue.record("never handled: \(published.subtracting(handled()).sorted().prefix(20))")
            throw error
        }
        let seen = handled()
        print(
            "replicas: shared stream of \(published.count) events, broker killed twice: handled \(Set(seen).count), lost \(published.subtracting(seen).count), handled twice \(seen.count - Set(seen).count)"
        )
        #expect(stream.failures.isEmpty, "\(stream.failures)")
        #expect(seen.count == Set(seen).count, "the shared journal turns a redelivery into a skip")
    }
    @Test(
        "micro-apps on two instances: each session on its own process; a clean stop moves its sessions, a kill -9 crashes only its own"
    )
    func appSessions() async throws {
        let broker = try await BrokerProcess()
        defer { broker.process.kill() }
        let arguments = ["--name", "shell", "--replicable", "--apps", "feed", "--liveness", "2"]
        let first = try await broker.service("lifeline-probe", arguments)
        defer { first.kill() }
        let second = try await broker.service("lifeline-probe", arguments)
        defer { second.kill() }
        for _ in 0..<2 { #expect(try await broker.cli(["apps", "start", "feed"]).status == 0) }
        try await first.waitForLine { $0 == "CALLBACK s1 feed didFinishLaunching" }
        try await second.waitForLine { $0 == "CALLBACK s2 feed didFinishLaunching" }
        #expect(!second.lines().contains { $0.hasPrefix("CALLBACK s1 ") }, "s1 lives in the first process")

        first.kill(SIGTERM)
        // Its restore callback creates the session's delegate in the second process.
        try await second.waitForLine { $0 == "CALLBACK s1 feed didCreate" }
        let listed = try await broker.cli(["apps", "list", "--json"])
        let stack = try JSONParser.parse(listed.output)["stack"]?.arrayValue ?? []
        #expect(
            stack.count == 2 && stack.allSatisfy { $0["instance"] == stack.first?["instance"] }, "\(stack)")

        let third = try await broker.service("lifeline-probe", arguments)
        defer { third.kill() }
        #expect(try await broker.cli(["apps", "start", "feed"]).status == 0)
        try await third.waitForLine { $0 == "CALLBACK s3 feed didFinishLaunching" }
        third.kill(SIGKILL)
        try await broker.process.waitForLine(.stderr) {
            $0.contains("session s3 (feed) crashed with its host shell (instance")
        }
        try await second.waitForLine { $0 == "CALLBACK s2 feed didResume" }
        let after = try JSONParser.parse(try await broker.cli(["apps", "list", "--json"]).output)
        #expect(after["stack"]?.arrayValue?.compactMap { $0["id"]?.stringValue } == ["s1", "s2"])
    }
}

/// What a loop of calls to `pay` saw while its instances were killed.
final class ReplicaCallTally: Sendable {
    struct Result {
        var idempotent = 0
        var idempotentFailed: [String] = []
        var other = 0
        var unavailable = 0
        var late: [String] = []
    }

    private let state = Mutex(Result())
    private let stopped = Atomic<Bool>(false)

    var result: Result { state.withLock { $0 } }
    var answered: Int { state.withLock { $0.idempotent + $0.other } }
    func stop() { stopped.store(true, ordering: .relaxed) }

    /// Calls `sleep` (idempotent) or `spin` (not) until stopped, one after another.
    func loop(_ client: LifelineClient, idempotent: Bool) async {
        while !stopped.load(ordering: .relaxed) {
            do {
                if idempotent {
                    _ = try await client.call("pay", "sleep", ["ms": 30], timeout: .seconds(20))
                } else {
                    _ = try await client.call("pay", "spin", ["ms": 5], timeout: .seconds(20))
                }
                state.withLock { idempotent ? ($0.idempotent += 1) : ($0.other += 1) }
            } catch let error as LifelineError {
                state.withLock {
                    if idempotent {
                        $0.idempotentFailed.append("\(error.status.rawValue) \(error.message)")
                    } else if error.status == .unavailable {
                        $0.unavailable += 1
                    } else {
                        $0.late.append("\(error.status.rawValue) \(error.message)")
                    }
                }
            } catch {
                state.withLock { $0.late.append("\(error)") }
            }
        }
    }
}

/// A stream of `com.example.paid` events, one every 5 ms, until stopped; the sequences the broker
/// gave them.
final class SharedStream: Sendable {
    private let client: LifelineClient
    private let state = Mutex<(sequences: [UInt64], failures: [String])>(([], []))
    private let stopped = Atomic<Bool>(false)

    init(broker: String) { client = LifelineClient(broker: broker) }

    var sequences: [UInt64] { state.withLock { $0.sequences } }
    var failures: [String] { state.withLock { $0.failures } }
    func stop() { stopped.store(true, ordering: .relaxed) }

    func run() async {
        var n: Int64 = 0
        while !stopped.load(ordering: .relaxed) {
            n += 1
            do {
                let receipt = try await client.publish(
                    "com.example.paid", ["n": .int(n)], timeout: .seconds(20))
                state.withLock { $0.sequences.append(receipt.sequence) }
            } catch {
                state.withLock { $0.failures.append("\(error)") }
            }
            try? await Task.sleep(for: .milliseconds(5))  // a steady stream, not a flood
        }
        await client.close()
    }
}
