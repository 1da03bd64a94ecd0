import Foundation
import Lifeline
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

    @Test("a subscription to a topic longer than any event name is refused, and the bus goes on")
    func longTopics() async throws {
        let broker = try await BrokerProcess()
        defer { broker.process.kill() }
        let hostile = try ZMQSocket(ZMQContext.shared, type: .sub)
        defer { hostile.close() }
        try hostile.connect(broker.bus)
        try hostile.set(.subscribe, [UInt8](repeating: UInt8(ascii: "a"), count: 64 * 1024))
        try await broker.process.waitForLine(.stderr) {
            $0.contains(
                "refused a bus subscription: a topic is an event name and its NUL, at most 201 bytes, got 65536"
            )
        }
        let client = try BlockingClient(broker: broker.control)
        let subscriber = try client.subscribe(to: ["com.example.fine"])
        _ = try client.publish("com.example.fine")
        let event = try subscriber.next(timeout: .seconds(10))
        #expect(event?.name == "com.example.fine", "ordinary subscriptions still work")
    }
}
