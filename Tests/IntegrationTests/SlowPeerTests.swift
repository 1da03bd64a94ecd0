import Foundation
import Lifeline
import LifelineCLI
import LifelineProtocol
import Testing
import ZeroMQ

/// What a control peer that reads slower than the broker sends to it gets: everything, in order.
@Suite("Real processes: a slow reader of a long REPLAY", .serialized, .timeLimit(.minutes(3)))
struct SlowPeerTests {
    static let events = 200_000

    @Test(
        "a REPLAY longer than the peer's queue: the broker holds what the queue cannot take and sends it all, in order, as the peer reads"
    )
    func slowReplayReader() async throws {
        let broker = try await BrokerProcess(["--journal-size", String(Self.events)])
        defer { broker.process.kill() }
        let client = try blockingClient(broker: broker.control)
        let epoch = try client.hello().epoch
        for batch in 0..<(Self.events / 10_000) {
            let events = (0..<10_000).map {
                PublishedEvent("test.flood", payload: Array("{\"n\":\(batch * 10_000 + $0)}".utf8))
            }
            _ = try client.publish(PublishRequest(batch: events), timeout: .seconds(30))
        }
        let reader = try ZMQSocket(ZMQContext.shared, type: .dealer)
        defer { reader.close() }
        try reader.set(.linger, 0)
        try reader.set(.receiveHighWaterMark, 100)
        try reader.set(.receiveTimeout, 10_000)
        try reader.connect(broker.control)
        let request = #"{"after": 0, "epoch": \#(epoch), "events": ["test.flood"]}"#
        _ = try reader.send(
            frames: [Array("LLC01".utf8), Array("REPLAY".utf8), Array("r1".utf8), Array(request.utf8)])
        // Reading nothing until the broker's queue for this peer is full.
        try await broker.process.waitForLine(.stderr, seconds: 60) { $0.contains("holding messages to") }
        var next: UInt64 = 1
        var reply: [[UInt8]]?
        while reply == nil, let frames = try reader.receiveFrames() {
            if frames.count >= 4, frames[1] == Array("EVENT".utf8) {
                let header = try JSONParser.parse(frames[3])
                #expect(header["sequence"]?.intValue == Int64(next), "in order, none missing")
                if header["sequence"]?.intValue != Int64(next) { break }
                next += 1
            } else if frames.count >= 4, frames[1] == Array("REPLY".utf8) {
                reply = frames
            }
        }
        #expect(next - 1 == UInt64(Self.events), "every event arrived")
        let body = try JSONParser.parse(try #require(reply?.last))
        #expect(body["replayed"]?.intValue == Int64(Self.events))
        try await broker.process.waitForLine(.stderr) { $0.contains("sent every message held for") }
        #expect(!broker.process.lines(.stderr).contains { $0.contains("dropped a message") })
    }
}
