import Foundation
import Lifeline
import LifelineProtocol
import Testing
import ZeroMQ

@Suite("Real processes: a retried publish is published once", .serialized, .timeLimit(.minutes(2)))
struct IdempotentPublishTests {
    @Test("copies of one publication queued by a DEALER across a broker outage are published once")
    func retriesAcrossAnOutage() async throws {
        let first = try await BrokerProcess()
        let dealer = try ZMQSocket(ZMQContext.shared, type: .dealer)
        try dealer.connect(first.control)
        func publish(_ requestID: String, _ publishID: String) throws {
            let request = ClientRequest.publish(
                PublishRequest(
                    event: "com.example.order", payload: Array("{\"n\":1}".utf8), publishID: publishID))
            try dealer.send(frames: request.controlRequest(id: Array(requestID.utf8)).frames())
        }
        func reply() throws -> ControlReply? {
            var poller = ZMQPoller()
            poller.add(dealer)
            guard try poller.poll(timeoutMilliseconds: 10_000) > 0,
                let frames = try dealer.receiveFrames(dontWait: true),
                case .reply(let reply) = try ControlMessage.decode(frames[...])
            else { return nil }
            return reply
        }
        try publish("warm-up", "p.0")
        #expect(try reply()?.status == .ok, "the DEALER is connected before the outage")

        first.process.kill(SIGKILL)
        _ = try await first.process.waitForExit()
        try publish("try-1", "p.1")
        try publish("try-2", "p.1")
        try publish("try-3", "p.1")
        let second = try await BrokerProcess(control: first.control, bus: first.bus)
        defer { second.process.kill() }
        var receipts: [String: PublishReceipt] = [:]
        for _ in 0..<3 {
            let answer = try #require(try reply())
            #expect(answer.status == .ok)
            receipts[String(decoding: answer.requestID, as: UTF8.self)] = try PublishReceipt(
                body: answer.body)
        }
        #expect(Set(receipts.keys) == ["try-1", "try-2", "try-3"], "every copy is answered")
        #expect(Set(receipts.values.map(\.sequence)) == [1], "all with the first receipt")
        let status = try await second.cli(["status", "--json"])
        #expect(try JSONParser.parse(status.output)["sequence"] == 1, "the new broker published one event")
        try await second.process.waitForLine(.stderr) { $0.contains("PUBLISH 'p.1' repeated by peer") }
        dealer.close()
    }
}
