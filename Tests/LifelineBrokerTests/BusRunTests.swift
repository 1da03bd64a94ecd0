import LifelineProtocol
import Testing
import ZeroMQ

@testable import LifelineBroker

@Suite("BusRun: what the broker sends on the bus is the protocol's bus message", .timeLimit(.minutes(1)))
struct BusRunTests {
    /// A connected pair of in-process sockets: the run sends on the first, the test reads the second.
    private static func pair() throws -> (ZMQSocket, ZMQSocket) {
        let sender = try ZMQSocket(ZMQContext.shared, type: .pair)
        let receiver = try ZMQSocket(ZMQContext.shared, type: .pair)
        let endpoint = "inproc://bus-run-\(UInt64.random(in: 0...UInt64.max))"
        try receiver.bind(endpoint)
        try sender.connect(endpoint)
        return (sender, receiver)
    }

    @Test(
        "runs of every shape — one event or many, empty and large payloads, names changing or not — leave as BusMessage.frames(batch:) writes them and decode to the same events"
    )
    func runsAreTheProtocolsBatches() throws {
        let (sender, receiver) = try Self.pair()
        var run = BusRun()
        var sequence: UInt64 = 0
        for round in 0..<300 {
            let name = EventName(rawValue: ["app.a", "app.b", "com.example.c"][(round / 2) % 3])
            var messages: [BusMessage] = []
            for index in 0..<(1 + round % 7) {
                sequence += 1
                let size = [0, 2, 17, 300, 5_000][(round / 7 + index) % 5]
                let payload = [UInt8](repeating: UInt8(ascii: "x"), count: size)
                let header = BusHeader(
                    epoch: 9, sequence: sequence, topicSequence: sequence, flags: sequence % 2,
                    publishedWallNanoseconds: sequence * 1_000, publishedMonotonicNanoseconds: sequence * 7)
                messages.append(BusMessage(name: name, header: header, payload: payload))
            }
            for message in messages {
                #expect(run.accepts(message), "round \(round)")
                run.add(message)
            }
            try run.send(on: sender)
            #expect(run.isEmpty)
            let frames = try #require(try receiver.receiveFrames())
            #expect(frames == BusMessage.frames(batch: messages), "round \(round): \(messages.count) events")
            #expect(try BusMessage.decodeBatch(frames) == messages, "round \(round)")
        }
    }

    @Test("a run takes only events of its own name, byte for byte, and no more than a bus message holds")
    func runBoundaries() {
        func message(_ name: EventName, size: Int = 1) -> BusMessage {
            BusMessage(
                name: name,
                header: BusHeader(
                    epoch: 1, sequence: 1, topicSequence: 1, flags: 0, publishedWallNanoseconds: 0,
                    publishedMonotonicNanoseconds: 0),
                payload: [UInt8](repeating: 0x20, count: size))
        }
        var run = BusRun()
        #expect(run.accepts(message("app.K")))
        run.add(message("app.K"))
        #expect(!run.accepts(message("app.\u{212A}")), "equal as Unicode text, not as bytes")
        #expect(!run.accepts(message("app.L")))
        for _ in 1..<BusMessage.maximumBatch { run.add(message("app.K")) }
        #expect(!run.accepts(message("app.K")), "\(BusMessage.maximumBatch) events at most")
        run.clear()
        run.add(message("app.K", size: BusMessage.maximumBatchBytes - 10))
        #expect(run.accepts(message("app.K", size: 10)))
        #expect(
            !run.accepts(message("app.K", size: 11)),
            "\(BusMessage.maximumBatchBytes) bytes of payload at most")
    }
}
