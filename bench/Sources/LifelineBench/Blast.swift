import Glibc
import Lifeline
import LifelineCLI
import LifelineProtocol
import LifelineSupport
import ZeroMQ

/// A pipelined publisher for experiments: keeps `window` PUBLISH requests in flight against a broker
/// and reports the rate at which they are answered.
enum Blast {
    /// `publish(contentsOf:)` with `batch` events to a PUBLISH and `window` of them outstanding.
    static func batched(broker: String, count: Int, batch: Int, window: Int, event: String) throws -> Double {
        let client = LifelineClient(broker: broker, credentials: nil)
        defer { AsyncBridge.run { await client.close() } }
        let payload = Payload.json(key: 1, size: 64, quiet: true)
        let start = SystemClock.monotonicNanoseconds()
        let events = (0..<count).map { _ in PublishedEvent(EventName(rawValue: event), payload: payload) }
        _ = try AsyncBridge.run {
            try await client.publish(
                contentsOf: events, batchSize: batch, window: window, timeout: .seconds(30))
        }
        return Double(count) / (Double(SystemClock.monotonicNanoseconds() - start) / 1e9)
    }

    /// A loop of `LifelineClient.post`, one event per call, then `flush()`: the rate of the natural
    /// code, the client coalescing what comes while a PUBLISH is out.
    static func posts(broker: String, count: Int, event: String) throws -> Double {
        let client = LifelineClient(broker: broker, credentials: nil)
        let payload = Payload.json(key: 1, size: 64, quiet: true)
        let published = PublishedEvent(EventName(rawValue: event), payload: payload)
        let start = SystemClock.monotonicNanoseconds()
        try AsyncBridge.run {
            for _ in 0..<count { await client.post(published, timeout: .seconds(30)) }
            try await client.flush()
        }
        let rate = Double(count) / (Double(SystemClock.monotonicNanoseconds() - start) / 1e9)
        AsyncBridge.run { await client.close() }
        return rate
    }

    static func run(broker: String, count: Int, window: Int, event: String, reply: Bool) throws -> Double {
        let publisher = try ZMQSocket(ZMQContext.shared, type: .dealer)
        try publisher.set(.sendHighWaterMark, 0)
        try publisher.set(.receiveHighWaterMark, 0)
        try publisher.connect(broker)
        var poller = ZMQPoller()
        poller.add(publisher)
        let header = JSONWriter.encode(
            reply ? ["event": .string(event)] : ["event": .string(event), "reply": false])
        let lastHeader = JSONWriter.encode(["event": .string(event)])
        let version = Array(ProtocolID.control.utf8)
        let command = Array(Command.publish.rawValue.utf8)
        let payload = Payload.json(key: 1, size: 64, quiet: true)
        let start = SystemClock.monotonicNanoseconds()
        var (sent, answered) = (0, 0)
        // Without replies, the last publish asks for one: the broker answers it after all the others.
        let expected = reply ? count : 1
        while answered < expected {
            while sent < count && (!reply || sent - answered < window) {
                let last = sent == count - 1
                guard
                    try publisher.send(
                        frames: [version, command, [], last ? lastHeader : header, payload], dontWait: true)
                else { break }
                sent += 1
            }
            while try publisher.receiveFrames(dontWait: true) != nil { answered += 1 }
            let canSend = sent < count && (!reply || sent - answered < window)
            if answered < expected && !canSend { try poller.poll(timeoutMilliseconds: 1) }
        }
        return Double(count) / (Double(SystemClock.monotonicNanoseconds() - start) / 1e9)
    }

    /// Publishes `count` events at `rate` per second, one event to a PUBLISH without a receipt (the
    /// last one asks for one, so the run ends when the broker has taken them all); returns the rate
    /// reached.
    static func paced(broker: String, count: Int, rate: Int, event: String) throws -> Double {
        let publisher = try ZMQSocket(ZMQContext.shared, type: .dealer)
        try publisher.set(.sendHighWaterMark, 0)
        try publisher.connect(broker)
        let header = JSONWriter.encode(["event": .string(event), "reply": false])
        let lastHeader = JSONWriter.encode(["event": .string(event)])
        let version = Array(ProtocolID.control.utf8)
        let command = Array(Command.publish.rawValue.utf8)
        let payload = Payload.json(key: 1, size: 64, quiet: true)
        let start = SystemClock.monotonicNanoseconds()
        var sent = 0
        while sent < count {
            let elapsed = Double(SystemClock.monotonicNanoseconds() - start) / 1e9
            let due = min(count, Int(elapsed * Double(rate)) + 1)
            while sent < due {
                try publisher.send(frames: [
                    version, command, [], sent == count - 1 ? lastHeader : header, payload,
                ])
                sent += 1
            }
            usleep(500)
        }
        var poller = ZMQPoller()
        poller.add(publisher)
        _ = try poller.poll(timeoutMilliseconds: 10_000)
        return Double(count) / (Double(SystemClock.monotonicNanoseconds() - start) / 1e9)
    }
}
