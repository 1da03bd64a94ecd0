import Foundation
import Lifeline
import Synchronization
import Testing

@Suite("Real processes under faults: nothing lost, nothing twice", .serialized, .timeLimit(.minutes(3)))
struct ChaosTests {
    @Test(
        "3 000 events while the broker is killed -9 twice and restarted on its state directory: each handled once, in order"
    )
    func brokerKills() async throws {
        let state = FileManager.default.temporaryDirectory.appendingPathComponent(
            "lifeline-state-\(UUID().uuidString)")
        let journal = FileManager.default.temporaryDirectory.appendingPathComponent(
            "lifeline-probe-\(UUID().uuidString).journal")
        defer {
            try? FileManager.default.removeItem(at: state)
            try? FileManager.default.removeItem(at: journal)
        }
        let brokerArguments = ["--journal-size", "20000", "--state-dir", state.path]
        var broker = try await BrokerProcess(brokerArguments)
        let (control, bus) = (broker.control, broker.bus)
        let probe = try await broker.service(
            "lifeline-probe",
            [
                "--name", "counter", "--events", "test.tick", "--journal", journal.path,
                "--heartbeat-interval", "200", "--liveness", "2",
            ])
        defer { probe.kill() }
        let client = LifelineClient(broker: control)
        let published = Atomic<Int>(0)
        let total = 3000
        let publisher = Task {
            for n in 1...total {
                try await client.publish("test.tick", ["n": .int(Int64(n))], timeout: .seconds(30))
                published.store(n, ordering: .relaxed)
            }
        }
        for killAt in [1000, 2000] {
            try await LifecycleSemanticsTests.poll(seconds: 60) {
                published.load(ordering: .relaxed) >= killAt
            }
            broker.process.kill(SIGKILL)
            _ = try await broker.process.waitForExit()
            print("killed the broker after \(published.load(ordering: .relaxed)) published events")
            broker = try await BrokerProcess(control: control, bus: bus, brokerArguments)
            try await broker.process.waitForLine(.stderr) {
                $0.contains("restored") && $0.contains("journal event(s)")
            }
        }
        defer { broker.process.kill() }
        try await publisher.value
        try await probe.waitForLine(seconds: 60) { $0.contains("\"n\":\(total)") }
        probe.kill(SIGTERM)
        _ = try await probe.waitForExit()
        let handled = try String(contentsOf: journal, encoding: .utf8).split(separator: "\n").map { line in
            try JSONParser.parse(String(line.split(separator: " ", maxSplits: 2)[2]))["n"]?.intValue ?? -1
        }
        let counts = Dictionary(grouping: handled, by: { $0 }).mapValues(\.count)
        let lost = (1...Int64(total)).filter { counts[$0] == nil }.count
        let duplicated = counts.values.filter { $0 > 1 }.count
        print("handled \(handled.count) events: lost \(lost), duplicated \(duplicated)")
        #expect(lost == 0 && duplicated == 0)
        #expect(handled == (1...Int64(total)).map { $0 }, "every event exactly once, in order")
        await client.close()
    }
}
