import Foundation
import Lifeline
import LifelineCLI
import LifelineProtocol
import Synchronization
import Testing
import ZeroMQ

/// What a control peer that reads slower than the broker sends to it gets: everything, in order.
@Suite("Real processes: a slow reader of a long REPLAY", .serialized, .timeLimit(.minutes(3)))
struct SlowPeerTests {
    static let events = 200_000

    /// Set once, from the test's task, read by the thread that reads the socket.
    final class Go: Sendable {
        private let value = Atomic<Bool>(false)
        func set() { value.store(true, ordering: .releasing) }
        var isSet: Bool { value.load(ordering: .acquiring) }
    }

    /// What the reader got: the events, in order until the first out of place, and the reply.
    struct Received: Sendable {
        var inOrder = 0
        var replayed: Int64?
    }

    @Test(
        "a REPLAY longer than the peer's queue: the broker holds what the queue cannot take and sends it all, in order, as the peer reads"
    )
    func slowReplayReader() async throws {
        let broker = try await BrokerProcess(["--journal-size", String(Self.events)])
        defer { broker.process.kill() }
        let control = broker.control
        let go = Go()
        defer { go.set() }
        // The publishing and the socket's reads block: they run on a thread of their own, not on the
        // Swift pool the other tests share.
        async let received = OffPool.run { () throws -> Received in
            let client = try blockingClient(broker: control)
            let epoch = try client.hello().epoch
            for batch in 0..<(Self.events / 10_000) {
                let events = (0..<10_000).map {
                    PublishedEvent("test.flood", payload: Array("{\"n\":\(batch * 10_000 + $0)}".utf8))
                }
                _ = try client.publish(PublishRequest(batch: events), timeout: .seconds(60))
            }
            let reader = try ZMQSocket(ZMQContext.shared, type: .dealer)
            defer { reader.close() }
            try reader.set(.linger, 0)
            try reader.set(.receiveHighWaterMark, 100)
            try reader.set(.receiveTimeout, 30_000)
            try reader.connect(control)
            let request = #"{"after": 0, "epoch": \#(epoch), "events": ["test.flood"]}"#
            _ = try reader.send(
                frames: [Array("LLC01".utf8), Array("REPLAY".utf8), Array("r1".utf8), Array(request.utf8)])
            // Reading nothing until the broker says it holds what this peer's queue cannot take.
            while !go.isSet { usleep(10_000) }
            var result = Received()
            while result.replayed == nil, let frames = try reader.receiveFrames() {
                if frames.count >= 4, frames[1] == Array("EVENT".utf8) {
                    let header = try JSONParser.parse(frames[3])
                    guard header["sequence"]?.intValue == Int64(result.inOrder + 1) else { break }
                    result.inOrder += 1
                } else if frames.count >= 4, frames[1] == Array("REPLY".utf8), let body = frames.last {
                    result.replayed = try JSONParser.parse(body)["replayed"]?.intValue ?? -1
                }
            }
            return result
        }
        try await broker.process.waitForLine(.stderr, seconds: 120) { $0.contains("holding messages to") }
        go.set()
        let got = try await received
        #expect(got.inOrder == Self.events, "every event arrived, in order")
        #expect(got.replayed == Int64(Self.events))
        try await broker.process.waitForLine(.stderr) { $0.contains("sent every message held for") }
        #expect(!broker.process.lines(.stderr).contains { $0.contains("dropped a message") })
    }
}
