import Foundation
import Lifeline
import LifelineProtocol
import Testing
import ZeroMQ

@Suite("Real processes: a peer cannot grow the broker without bound", .serialized, .timeLimit(.minutes(2)))
struct MemoryLimitTests {
    /// The resident set of `pid` in KiB, from /proc.
    static func residentKiB(_ pid: Int32) throws -> Int {
        let status = try String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8)
        let line = status.split(separator: "\n").first { $0.hasPrefix("VmRSS:") } ?? ""
        return Int(line.split(separator: " ").dropFirst().first ?? "") ?? 0
    }

    @Test("120 MiB of events into a journal limited to 16 MiB: the broker's memory stays bounded")
    func journalBytes() async throws {
        let broker = try await BrokerProcess(["--journal-bytes", "\(16 << 20)"])
        defer { broker.process.kill() }
        let before = try Self.residentKiB(broker.process.pid)
        let dealer = try ZMQSocket(ZMQContext.shared, type: .dealer)
        defer { dealer.close() }
        try dealer.connect(broker.control)
        let payload =
            Array("{\"data\":\"".utf8) + [UInt8](repeating: UInt8(ascii: "x"), count: 4 << 20)
            + Array("\"}".utf8)
        var poller = ZMQPoller()
        poller.add(dealer)
        for index in 0..<30 {
            let request = ClientRequest.publish(PublishRequest(event: "com.example.big", payload: payload))
            try dealer.send(frames: request.controlRequest(id: Array("p\(index)".utf8)).frames())
            #expect(try poller.poll(timeoutMilliseconds: 10_000) > 0)
            _ = try dealer.receiveFrames(dontWait: true)
        }
        let status = try await broker.cli(["status", "--json"])
        let journal = try JSONParser.parse(status.output)["journal"]
        let after = try Self.residentKiB(broker.process.pid)
        print(
            "broker RSS \(before) KiB before, \(after) KiB after 30 events of 4 MiB; journal holds \(journal?["events"] ?? .null)"
        )
        #expect(journal?["events"] == 3, "16 MiB hold three 4 MiB events")
        #expect(after - before < 64 * 1024, "the broker holds about its journal, not everything it was sent")
    }

    @Test(
        "a stopped service under 100 MiB of batched events: the broker holds its queue bound, the others get every event"
    )
    func stoppedSubscriberUnderBatches() async throws {
        let broker = try await BrokerProcess(["--bus-hwm", "200", "--journal-size", "1000"])
        let stuck = try await broker.service(
            "lifeline-probe",
            ["--name", "stuck", "--events", "load.tick", "--heartbeat-interval", "100", "--liveness", "2"])
        defer { stuck.kill(SIGCONT); stuck.kill(); broker.process.kill() }
        let watcher = try blockingClient(broker: broker.control, credentials: nil)
        let subscriber = try watcher.subscribe(to: ["load.tick"])
        let before = try Self.residentKiB(broker.process.pid)
        stuck.kill(SIGSTOP)
        let payload =
            Array("{\"data\":\"".utf8) + [UInt8](repeating: UInt8(ascii: "x"), count: 2000)
            + Array("\"}".utf8)
        // 100 MiB in steps of 1000 events, each step taken by the running subscriber before the next:
        // it never lags, while the stopped one falls behind by everything.
        let client = LifelineClient(broker: broker.control, credentials: nil)
        let (steps, step) = (50, 1000)
        var (received, inOrder) = (0, true)
        var peak = before
        for round in 1...steps {
            _ = try await client.publish(
                contentsOf: (0..<step).map { _ in PublishedEvent("load.tick", payload: payload) },
                batchSize: 500, window: 2, timeout: .seconds(30))
            while received < round * step, let message = try subscriber.next(timeout: .seconds(20)) {
                received += 1
                inOrder = inOrder && message.header.topicSequence == UInt64(received)
            }
            peak = max(peak, try Self.residentKiB(broker.process.pid))
        }
        await client.close()
        print(
            "broker RSS \(before) KiB before, at most \(peak) KiB while 100 MiB went by a stopped subscriber")
        #expect(received == steps * step && inOrder, "the running subscriber got every event once, in order")
        #expect(
            peak - before < 48 * 1024,
            "the stopped subscriber queues 200 messages (12.5 MiB), not all it was sent")
        // Stopped for seconds with a 100 ms heartbeat, it was expired: once it runs it registers again.
        stuck.kill(SIGCONT)
        try await stuck.waitForLine(.stderr, seconds: 30) { $0.contains("registered again with the broker") }
        // Its 200 ms window is short on a loaded machine: a stall right after it registered again may
        // expire it once more, and it registers again after that too.
        var answer = try await broker.cli(["call", "stuck", "echo", "{\"back\":true}"])
        let deadline = ContinuousClock.now + .seconds(30)
        while answer.status != 0, answer.errors.contains("no service named 'stuck'"),
            ContinuousClock.now < deadline
        {
            try await Task.sleep(for: .milliseconds(100))  // polling with a deadline
            answer = try await broker.cli(["call", "stuck", "echo", "{\"back\":true}"])
        }
        #expect(answer.status == 0, "the stopped service serves again once it runs: \(answer.errors)")
    }

    @Test("a subscription to a topic longer than any event name is refused, and the bus goes on")
    func longTopics() async throws {
        let broker = try await BrokerProcess()
        defer { broker.process.kill() }
        let hostile = try ZMQSocket(ZMQContext.shared, type: .sub)
        defer { hostile.close() }
        try hostile.connect(broker.bus)
        try hostile.set(.subscribe, [UInt8](repeating: UInt8(ascii: "a"), count: 1000))
        try await broker.process.waitForLine(.stderr) {
            $0.contains(
                "refused a bus subscription: a topic is an event name and its NUL, at most 201 bytes, got 1000"
            )
        }
        // Over the bus socket's 1 KiB message limit the connection is closed before it is read.
        let huge = try ZMQSocket(ZMQContext.shared, type: .sub)
        defer { huge.close() }
        try huge.connect(broker.bus)
        try huge.set(.subscribe, [UInt8](repeating: UInt8(ascii: "a"), count: 64 * 1024))
        let client = try blockingClient(broker: broker.control)
        let subscriber = try client.subscribe(to: ["com.example.fine"])
        _ = try client.publish("com.example.fine")
        let event = try subscriber.next(timeout: .seconds(10))
        #expect(event?.name == "com.example.fine", "ordinary subscriptions still work")
    }
}
