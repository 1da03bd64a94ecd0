import Lifeline
import LifelineBroker
import LifelineProtocol
import LifelineSupport
import LifelineTesting

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

    /// A CALL from a client routed to a registered service, and the service's answer routed back.
    private static func callRoundTrip(in core: inout Broker, iterations: Int) throws -> (String, Double) {
        var output: [BrokerOutput] = []
        let service: [UInt8] = [9, 9, 9]
        let registration = ServiceRegistration(
            name: "echo", instance: "echo-1", pid: 1, host: "h", events: [], methods: ["echo"],
            attachToken: "echo-1")
        core.handleBusNotice([1] + Array("!echo-1".utf8), now: SystemClock.now, into: &output)
        core.handleControl(
            peer: service,
            frames: ControlRequest(.register, requestID: Array("r1".utf8), header: registration.json)
                .frames()[...],
            now: SystemClock.now, into: &output)
        let call = ClientRequest.call(
            ServiceCall(service: "echo", method: "echo", body: Payload.json(key: 1, size: 64))
        ).controlRequest(id: Array("c42".utf8)).frames()
        let client: [UInt8] = [0, 1, 2, 3, 4]
        return try measure(
            "broker: route a CALL to its service and the answer back", iterations: iterations
        ) {
            output.removeAll(keepingCapacity: true)
            core.handleControl(peer: client, frames: call[...], now: SystemClock.now, into: &output)
            guard case .send(let peer, let frames)? = output.last, peer == service, frames.count > 2 else {
                throw LifelineError(.internalError, "the CALL was not routed")
            }
            let answer = ControlReply(requestID: frames[2], status: .ok, body: Array("{\"ok\":true}".utf8))
                .frames()
            output.removeAll(keepingCapacity: true)
            core.handleControl(peer: service, frames: answer[...], now: SystemClock.now, into: &output)
        }
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
        let batch = ControlRequest(
            .publish, requestID: Array("k43".utf8), header: ["event": "bench.n1", "count": 1000],
            payload: PackedPayloads.frame(Array(repeating: payload, count: 1000))
        ).frames()
        let perEvent = measure(
            "broker: handle a PUBLISH of 1000 events (per event)", iterations: max(1, iterations / 1000)
        ) {
            output.removeAll(keepingCapacity: true)
            core.handleControl(peer: peer, frames: batch[...], now: SystemClock.now, into: &output)
        }
        results.append((perEvent.0, perEvent.1 / 1000))
        results.append(
            try callRoundTrip(in: &core, iterations: iterations))
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
        results += try typedCoding(iterations: iterations)
        results += try hostedCalls(iterations: max(1000, iterations / 10))
        return results
    }

    /// A typed event's payload and a typed call's body, decoded and encoded the way the SDK does
    /// now (straight from and to the text) and the way it did (through a `JSONValue` tree).
    private static func typedCoding(iterations: Int) throws -> [(String, Double)] {
        let payload = Payload.json(key: 123_456, size: 64)
        let value = try JSONBytesDecoder.decode(TypedN1.self, from: payload)
        return [
            measure(
                "untyped: read k, q and p of a 64 B payload (what the pool row's handler reads)",
                iterations: iterations
            ) {
                _ = (
                    JSONFieldReader.value(of: "k", in: payload), JSONFieldReader.value(of: "q", in: payload),
                    JSONFieldReader.value(of: "p", in: payload)
                )
            },
            try measure("typed: decode a 64 B payload from its text (tape)", iterations: iterations) {
                _ = try JSONBytesDecoder.decode(TypedN1.self, from: payload)
            },
            try measure(
                "typed: decode a 64 B payload through a tree (parse, then decode)", iterations: iterations
            ) {
                _ = try JSONValueDecoder.decode(TypedN1.self, from: try JSONParser.parse(payload))
            },
            try measure("typed: encode a 64 B payload to text", iterations: iterations) {
                _ = try JSONBytesEncoder.encode(value)
            },
            try measure(
                "typed: encode a 64 B payload through a tree (encode, then write)", iterations: iterations
            ) {
                _ = JSONWriter.encode(try JSONValueEncoder.encode(value))
            },
        ]
    }

    /// One call answered by a service host in this process (no sockets: `ServiceTestHost`), the
    /// same body to a typed method and to a distributed actor's func: what the actor path costs
    /// the host beyond the typed one.
    private static func hostedCalls(iterations: Int) throws -> [(String, Double)] {
        try AsyncBridge.run {
            let host = try await ServiceTestHost(
                Service("echo")
                    .method("echo-typed") { (body: EchoBody, _) async throws -> EchoBody in body }
                    .actor { EchoActor(actorSystem: $0.actorSystem) })
            let body: JSONValue = ["k": 7, "p": "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"]
            var results: [(String, Double)] = []
            for (name, method) in [("typed method", "echo-typed"), ("distributed actor func", "echoActor")] {
                for _ in 0..<1000 { _ = try await host.call(method, body) }
                let start = SystemClock.monotonicNanoseconds()
                for _ in 0..<iterations { _ = try await host.call(method, body) }
                let elapsed = Double(SystemClock.monotonicNanoseconds() - start)
                results.append(
                    ("host: a call to a \(name), in process (ServiceTestHost)", elapsed / Double(iterations)))
            }
            try await host.stop()
            return results
        }
    }
}
