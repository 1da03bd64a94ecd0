import Lifeline
import LifelineBroker
import LifelineSupport

/// CPU cost of the runtime's own code on the hot path, without sockets: what a publish costs the
/// broker and what an event costs a subscriber before its handler runs.
enum Micro {
    static func measure(_ name: String, iterations: Int, _ body: () throws -> Void) rethrows -> (
        String, Double
    ) {
        for _ in 0..<(iterations / 10) { try body() }
        let start = SystemClock.monotonicNanoseconds()
        for _ in 0..<iterations { try body() }
        let perOperation = Double(SystemClock.monotonicNanoseconds() - start) / Double(iterations)
        return (name, perOperation)
    }

    static func run(iterations: Int) throws -> [(String, Double)] {
        var core = Broker(
            configuration: BrokerConfiguration(), identity: BrokerIdentity(pid: 1, host: "h", version: "v"),
            busEndpoints: ["ipc://x"],
            monotonic: SystemClock.now, wall: SystemClock.wallNanoseconds())
        var output: [BrokerOutput] = []
        let payload = Payload.json(key: 123_456, size: 64)
        let publish = ControlRequest(
            .publish, requestID: Array("k42".utf8), header: ["event": "bench.n1"], payload: payload
        ).frames()
        let peer: [UInt8] = [0, 1, 2, 3, 4]
        var results: [(String, Double)] = []
        results.append(
            measure(
                "broker: handle PUBLISH (decode, validate, stamp, encode event + reply)",
                iterations: iterations
            ) {
                output.removeAll(keepingCapacity: true)
                core.handleControl(
                    peer: peer, frames: publish[...], now: SystemClock.now, into: &output)
            })
        results.append(
            try measure("protocol: decode a PUBLISH request", iterations: iterations) {
                _ = try ControlMessage.decode(publish[...])
            })
        results.append(
            try measure("json: parse a 64 B payload", iterations: iterations) {
                _ = try JSONParser.parse(payload)
            })
        results.append(
            measure("json: encode a publish reply body", iterations: iterations) {
                _ = JSONWriter.encode([
                    "event": "bench.n1", "sequence": 42, "epoch": 1_796_022_761_636_622_627, "subscribers": 1,
                ])
            })
        let event = BusMessage(
            name: "bench.n1",
            header: BusHeader(
                epoch: 1, sequence: 2, topicSequence: 3, publishedWallNanoseconds: 4,
                publishedMonotonicNanoseconds: 5),
            payload: payload
        ).frames()
        results.append(
            try measure("protocol: decode a bus event", iterations: iterations) {
                _ = try BusMessage.decode(event)
            })
        return results
    }
}
