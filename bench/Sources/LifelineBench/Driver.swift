import Foundation
import Lifeline
import LifelineProtocol
import LifelineSupport
import ZeroMQ

/// Runs every scenario against Lifeline and its raw-libzmq baselines, interleaving the systems round
/// by round (A B A B …) so that drift of the machine falls on both alike.
final class Driver {
    let settings: Settings
    let binaries: URL
    let work: URL
    let ack: ZMQSocket
    let ackEndpoint: String
    var figures: [Figure] = []
    var key: UInt64 = 0
    var ackPoller = ZMQPoller()

    init(settings: Settings) throws {
        self.settings = settings
        binaries = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath()
            .deletingLastPathComponent()
        work = URL(fileURLWithPath: NSTemporaryDirectory()).appendingPathComponent(
            "lifeline-bench-\(getpid())")
        try FileManager.default.createDirectory(at: work, withIntermediateDirectories: true)
        ack = try ZMQSocket(ZMQContext.shared, type: .pull)
        try ack.set(.receiveHighWaterMark, 0)
        ackEndpoint = "ipc://\(work.path)/ack"
        try ack.bind(ackEndpoint)
        ackPoller.add(ack)
    }

    func run() throws {
        let perTransport = ["broadcast", "roundtrip", "throughput", "paced", "sustained"].filter(
            settings.wants)
        for transport in settings.transports where !perTransport.isEmpty {
            progress(
                "starting the \(transport) topology (broker + \(settings.fanouts.max() ?? 1) services, baselines) ..."
            )
            let topology = try BenchTopology(
                transport: transport, fanouts: settings.fanouts, binaries: binaries, work: work,
                ackEndpoint: ackEndpoint, durable: settings.durable, curve: settings.curve,
                group: settings.group)
            defer { topology.stop() }
            for line in topology.skipped { progress(line) }
            if settings.wants("broadcast") { try broadcast(topology) }
            if settings.wants("roundtrip") { try roundTrips(topology) }
            if settings.wants("throughput") { try throughput(topology) }
            if settings.wants("paced") { try paced(topology) }
            if settings.wants("sustained") { try sustained(topology) }
        }
        if settings.wants("guaranteed") {
            progress("the guaranteed tier (tcp): Lifeline with --state-dir, JetStream, Redis Streams ...")
            try GuaranteedTier(driver: self).run()
        }
        try? FileManager.default.removeItem(at: work)
    }

    func progress(_ line: String) { Console.error("bench: \(line)") }

    func nextKey() -> UInt64 {
        key += 1
        return key
    }

    // MARK: Acks

    func receiveAck(until deadline: UInt64) throws -> Ack? {
        while true {
            if let frames = try ack.receiveFrames(dontWait: true) {
                if let first = frames.first, let decoded = Ack(first) { return decoded }
                continue
            }
            let now = SystemClock.monotonicNanoseconds()
            guard now < deadline else { return nil }
            try ackPoller.poll(timeoutMilliseconds: SystemClock.pollTimeout(until: deadline, now: now))
        }
    }

    /// Sends probes until `expected` subscribers ack the same one (ZeroMQ's slow joiners); returns the
    /// largest event count reported by them.
    @discardableResult
    func synchronize(_ what: String, expected: Int, send: (UInt64) throws -> Void) throws -> UInt64 {
        let deadline = SystemClock.monotonicNanoseconds() + 15_000_000_000
        while SystemClock.monotonicNanoseconds() < deadline {
            let probe = nextKey()
            try send(probe)
            var seen = 0
            var count: UInt64 = 0
            let wait = SystemClock.monotonicNanoseconds() + 50_000_000
            while let ack = try receiveAck(until: wait) {
                if ack.key == probe {
                    seen += 1
                    count = max(count, ack.count)
                    if seen == expected { return count }
                }
            }
        }
        throw BenchError("\(what): \(expected) subscribers did not all answer within 15 s")
    }

    // MARK: Broadcast

    private struct Samples {
        var perSubscriber: [UInt64] = []
        var last: [UInt64] = []
        var lost = 0
        /// Lifeline only: publisher → broker, broker → service socket thread, socket thread → handler.
        var legs: [[UInt64]] = [[], [], []]
    }

    /// Closed loop: publish one event, wait until all `expected` subscribers have handled it, repeat.
    private func closedLoop(
        count: Int, expected: Int, into samples: inout Samples, send: (UInt64) throws -> Void
    ) throws {
        for _ in 0..<count {
            let current = nextKey()
            let start = SystemClock.monotonicNanoseconds()
            try send(current)
            var got = 0
            var worst: UInt64 = 0
            let deadline = start + 2_000_000_000
            while got < expected {
                guard let ack = try receiveAck(until: deadline) else {
                    samples.lost += 1
                    break
                }
                guard ack.key == current else { continue }
                let latency = ack.received &- start
                samples.perSubscriber.append(latency)
                if ack.published > start && ack.socketReceived >= ack.published
                    && ack.received >= ack.socketReceived
                {
                    samples.legs[0].append(ack.published - start)
                    samples.legs[1].append(ack.socketReceived - ack.published)
                    samples.legs[2].append(ack.received - ack.socketReceived)
                }
                worst = max(worst, latency)
                got += 1
            }
            if got == expected { samples.last.append(worst) }
        }
    }

    private func broadcast(_ topology: BenchTopology) throws {
        for size in settings.sizes {
            for fanout in settings.fanouts {
                progress(
                    "broadcast \(topology.transport) N=\(fanout) \(size) B: \(max(1, settings.samples / settings.rounds) * settings.rounds) events per system, \(settings.rounds) interleaved rounds"
                )
                let event = EventName(rawValue: "bench.n\(fanout)")
                let poolEvent = EventName(rawValue: "pool.n\(fanout)")
                let proxyTopic = Array("bench.n\(fanout)".utf8) + [0]
                let directTopic = Array("direct.n\(fanout)".utf8) + [0]
                var systems: [(String, (UInt64) throws -> Void)] = [
                    (
                        "lifeline",
                        { key in
                            _ = try topology.client.publish(
                                event, payload: Payload.json(key: key, size: size))
                        }
                    ),
                    (
                        "lifeline pool",
                        { key in
                            _ = try topology.client.publish(
                                poolEvent, payload: Payload.json(key: key, size: size))
                        }
                    ),
                    (
                        "zmq_proxy",
                        { key in
                            try topology.proxyPub.send(frames: [
                                proxyTopic, Payload.json(key: key, size: size),
                            ])
                        }
                    ),
                    (
                        "zmq_direct",
                        { key in
                            try topology.directPub.send(frames: [
                                directTopic, Payload.json(key: key, size: size),
                            ])
                        }
                    ),
                ]
                var roles = [
                    ("lifeline broker", "lifeline subscribers"), ("lifeline broker", "lifeline subscribers"),
                    ("zmq_proxy broker", "zmq subscribers"), ("", "zmq subscribers"),
                ]
                if let group = topology.groupClient, fanout == 1 {
                    systems.append(
                        (
                            "lifeline group",
                            { key in
                                _ = try group.publish(event, payload: Payload.json(key: key, size: size))
                            }
                        ))
                    roles.append(("lifeline group broker", "lifeline group subscribers"))
                }
                if let secure = topology.secureClient {
                    systems.append(
                        (
                            "lifeline+curve",
                            { key in
                                _ = try secure.publish(event, payload: Payload.json(key: key, size: size))
                            }
                        ))
                    roles.append(("lifeline+curve broker", "lifeline+curve subscribers"))
                }
                // The default path again, each event decoded into a Codable struct before its handler.
                let typedEvent = EventName(rawValue: "typed.n\(fanout)")
                systems.append(
                    (
                        "lifeline typed",
                        { key in
                            _ = try topology.client.publish(
                                typedEvent, payload: Payload.json(key: key, size: size))
                        }
                    ))
                roles.append(("lifeline broker", "lifeline subscribers"))
                // The peers, on the same payload as the raw libzmq rows, each publish sent at once.
                let subject = Array("bench.n\(fanout)".utf8)
                if let nats = topology.nats {
                    systems.append(
                        (
                            "nats",
                            { key in
                                nats.publish(subject, Payload.json(key: key, size: size))
                                try nats.flush()
                            }
                        ))
                    roles.append(("nats server", "nats subscribers"))
                }
                if let redis = topology.redis {
                    systems.append(
                        (
                            "redis",
                            { key in
                                redis.command([
                                    Array("PUBLISH".utf8), subject, Payload.json(key: key, size: size),
                                ])
                                try redis.flush()
                                _ = try redis.next()
                            }
                        ))
                    roles.append(("redis server", "redis subscribers"))
                }
                var results = Array(repeating: Samples(), count: systems.count)
                var cpu = Array(repeating: (broker: 0.0, subscribers: 0.0, events: 0), count: systems.count)
                for (index, system) in systems.enumerated() {
                    try synchronize("\(system.0) N=\(fanout)", expected: fanout, send: system.1)
                    var warm = Samples()
                    try closedLoop(count: settings.warmup, expected: fanout, into: &warm, send: system.1)
                    _ = index
                }
                let perRound = max(1, settings.samples / settings.rounds)
                for _ in 0..<settings.rounds {
                    for (index, system) in systems.enumerated() {
                        let (brokerRole, subscriberRole) = roles[index]
                        let before = (topology.cpu(brokerRole), topology.cpu(subscriberRole, first: fanout))
                        try closedLoop(
                            count: perRound, expected: fanout, into: &results[index], send: system.1)
                        cpu[index].broker += topology.cpu(brokerRole) - before.0
                        cpu[index].subscribers += topology.cpu(subscriberRole, first: fanout) - before.1
                        cpu[index].events += perRound
                    }
                }
                if fanout == 1 {
                    for (leg, name) in [
                        "publisher → broker", "broker → socket thread", "socket thread → handler",
                    ].enumerated() {
                        figures.append(
                            Figure(
                                scenario: "broadcast leg", system: "lifeline", transport: topology.transport,
                                fanout: 1, size: size,
                                metric: name, mode: "closed-loop", summary: Summary(results[0].legs[leg])))
                    }
                }
                for (index, system) in systems.enumerated() {
                    for (metric, samples) in [
                        ("per-subscriber", results[index].perSubscriber),
                        ("last-subscriber", results[index].last),
                    ] {
                        if fanout == 1 && metric == "per-subscriber" { continue }
                        let events = Double(max(1, cpu[index].events))
                        figures.append(
                            Figure(
                                scenario: "broadcast", system: system.0, transport: topology.transport,
                                fanout: fanout, size: size,
                                metric: fanout == 1 ? "one-way" : metric, mode: "closed-loop",
                                summary: Summary(samples),
                                lost: results[index].lost,
                                brokerCPU: index == 2 ? nil : cpu[index].broker / events,
                                subscriberCPU: cpu[index].subscribers / events))
                    }
                }
            }
        }
    }

    // MARK: Round trips

    private func roundTrips(_ topology: BenchTopology) throws {
        let size = 64
        let payload = Payload.json(key: 0, size: size)
        func exchange(_ socket: ZMQSocket) throws {
            try socket.send(frames: [payload])
            _ = try socket.receiveFrames()
        }
        let lookup = ClientRequest.lookup(name: "bench-0")
        let call = ClientRequest.call(
            ServiceCall(service: "bench-0", method: "echo", timeoutMilliseconds: 5000, body: payload))
        let poolCall = ClientRequest.call(
            ServiceCall(service: "bench-0", method: "echo-pool", timeoutMilliseconds: 5000, body: payload))
        let typedCall = ClientRequest.call(
            ServiceCall(service: "bench-0", method: "echo-typed", timeoutMilliseconds: 5000, body: payload))
        let actorCall = ClientRequest.call(
            ServiceCall(service: "bench-0", method: "echoActor", timeoutMilliseconds: 5000, body: payload))
        // The same func on an actor by key: one placed key, and a new key each time (its activation).
        let keyedCall = ClientRequest.call(
            ServiceCall(
                service: "bench-keyed", method: "echoActor", key: "placed", timeoutMilliseconds: 5000,
                body: payload))
        var activations = 0
        // LifelineClient's publish (a lone event through the coalescing queue) against the same
        // client's one request per event (the path before coalescing), awaited in async code: each
        // block of samples runs in one task and each sample is timed inside it, as a program written
        // in async code waits (a task started per sample and a semaphore back to this thread would
        // add two thread wake-ups that no such program has).
        let asyncClient = LifelineClient(broker: topology.brokerControl, credentials: nil)
        let jsonPayload = try JSONParser.parse(payload)
        let publications = PublicationCounter()
        // The legs of "lifeline async (legs)": posted → reply on the socket thread → task resumed.
        let asyncLegs = LegRecorder()
        let asyncSystems: [String: @Sendable (Int) async throws -> [UInt64]] = [
            "lifeline async": { count in
                try await AsyncSamples.take(count) {
                    _ = try await asyncClient.publish("bench.none", jsonPayload)
                }
            },
            // The request of "async direct", its reply handled on the socket thread, which resumes the
            // task: each sample's two legs are kept.
            "lifeline async (legs)": { count in
                try await AsyncSamples.take(count) {
                    let publication = PublishRequest(
                        event: "bench.none", payload: JSONWriter.encode(jsonPayload),
                        publishID: "bench-legs.\(publications.next())")
                    let sent = SystemClock.monotonicNanoseconds()
                    let replied = try await withCheckedThrowingContinuation {
                        (done: CheckedContinuation<UInt64, any Error>) in
                        asyncClient.send(.publish(publication)) { result in
                            let replied = SystemClock.monotonicNanoseconds()
                            done.resume(with: result.map { _ in replied }.mapError { $0 })
                        }
                    }
                    asyncLegs.record(replied - sent, SystemClock.monotonicNanoseconds() - replied)
                }
            },
            "lifeline async direct": { count in
                try await AsyncSamples.take(count) {
                    let publication = PublishRequest(
                        event: "bench.none", payload: JSONWriter.encode(jsonPayload),
                        publishID: "bench-direct.\(publications.next())")
                    _ = try await asyncClient.request(.publish(publication))
                }
            },
        ]
        var scenarios: [(String, [(String, () throws -> Void)])] = [
            (
                "publish-ack",
                [
                    ("lifeline", { _ = try topology.client.publish("bench.none", payload: payload) }),
                    ("lifeline async", {}), ("lifeline async (legs)", {}), ("lifeline async direct", {}),
                    ("zmq_direct", { try exchange(topology.echoDealer) }),
                ]
            ),
            (
                "lookup",
                [
                    ("lifeline", { _ = try topology.client.request(lookup) }),
                    ("zmq_direct", { try exchange(topology.echoDealer) }),
                ]
            ),
            (
                "call",
                [
                    ("lifeline", { _ = try topology.client.request(call) }),
                    ("lifeline pool", { _ = try topology.client.request(poolCall) }),
                    ("lifeline typed", { _ = try topology.client.request(typedCall) }),
                    ("lifeline actor", { _ = try topology.client.request(actorCall) }),
                    ("lifeline actor by key", { _ = try topology.client.request(keyedCall) }),
                    (
                        "lifeline actor activation",
                        {
                            activations += 1
                            let call = ServiceCall(
                                service: "bench-keyed", method: "echoActor", key: "new-\(activations)",
                                timeoutMilliseconds: 5000, body: payload)
                            _ = try topology.client.request(.call(call))
                        }
                    ),
                    ("zmq_proxy", { try exchange(topology.proxiedDealer) }),
                ]
            ),
        ]
        if let requester = topology.natsRequester {
            // A NATS request: PUB with a reply subject the requester subscribed to, answered by the
            // responder process.
            let subject = Array("bench.echo".utf8)
            let body = Payload.json(key: 0, size: size)
            scenarios[2].1.append(
                (
                    "nats",
                    {
                        requester.publish(subject, body, reply: BenchTopology.natsInbox)
                        try requester.flush()
                        _ = try requester.next()
                    }
                ))
        }
        if let secure = topology.secureClient {
            // Its services are numbered from 200.
            let secureCall = ClientRequest.call(
                ServiceCall(service: "bench-200", method: "echo", timeoutMilliseconds: 5000, body: payload))
            scenarios[2].1.append(("lifeline+curve", { _ = try secure.request(secureCall) }))
        }
        for (scenario, systems) in scenarios {
            progress("\(scenario) round trip \(topology.transport): \(settings.samples) per system")
            var samples = Array(repeating: [UInt64](), count: systems.count)
            let warmup = settings.warmup
            for system in systems {
                if let block = asyncSystems[system.0] {
                    _ = try AsyncBridge.run { try await block(warmup) }
                } else {
                    for _ in 0..<warmup { try system.1() }
                }
            }
            asyncLegs.reset()
            let perRound = max(1, settings.samples / settings.rounds)
            for _ in 0..<settings.rounds {
                for (index, system) in systems.enumerated() {
                    if let block = asyncSystems[system.0] {
                        samples[index] += try AsyncBridge.run { try await block(perRound) }
                        continue
                    }
                    for _ in 0..<perRound {
                        let start = SystemClock.monotonicNanoseconds()
                        try system.1()
                        samples[index].append(SystemClock.monotonicNanoseconds() - start)
                    }
                }
            }
            for (index, system) in systems.enumerated() {
                figures.append(
                    Figure(
                        scenario: scenario, system: system.0, transport: topology.transport, fanout: 1,
                        size: size, metric: "rtt",
                        mode: "closed-loop", summary: Summary(samples[index])))
            }
            if scenario == "publish-ack" {
                let legs = asyncLegs.legs
                for (leg, name) in ["posted → reply (socket thread)", "reply → task resumed"].enumerated()
                where !legs[leg].isEmpty {
                    figures.append(
                        Figure(
                            scenario: "publish-ack leg", system: "lifeline async",
                            transport: topology.transport,
                            fanout: 1, size: size, metric: name, mode: "closed-loop",
                            summary: Summary(legs[leg])))
                }
            }
        }
    }

    // MARK: Paced

    /// Open loop at a fixed rate; latency counts from the *intended* send time, so a stall of the
    /// system delays every later event's measurement instead of hiding (coordinated omission).
    private func paced(_ topology: BenchTopology) throws {
        let rate = settings.pacedRate
        progress(
            "paced broadcast \(topology.transport) N=1 64 B at \(rate)/s: \(settings.samples) events per system"
        )
        let publisher = try ZMQSocket(ZMQContext.shared, type: .dealer)
        try publisher.set(.sendHighWaterMark, 0)
        try publisher.connect(topology.brokerControl)
        let header = JSONWriter.encode(["event": "bench.n1"])
        let version = Array(ProtocolID.control.utf8)
        let command = Array(Command.publish.rawValue.utf8)
        let topic = Array("bench.n1".utf8) + [0]
        let systems: [(String, (UInt64) throws -> Void)] = [
            (
                "lifeline",
                { key in
                    try publisher.send(frames: [
                        version, command, Array(String(key).utf8), header, Payload.json(key: key, size: 64),
                    ])
                    while try publisher.receiveFrames(dontWait: true) != nil {}
                }
            ),
            (
                "zmq_proxy",
                { key in try topology.proxyPub.send(frames: [topic, Payload.json(key: key, size: 64)]) }
            ),
        ]
        var latencies = Array(repeating: [UInt64](), count: systems.count)
        var lags = Array(repeating: [UInt64](), count: systems.count)
        var lost = Array(repeating: 0, count: systems.count)
        for system in systems { try synchronize("paced \(system.0)", expected: 1, send: system.1) }
        let perRound = max(1, settings.samples / settings.rounds)
        let interval = UInt64(1_000_000_000 / rate)
        for _ in 0..<settings.rounds {
            for (index, system) in systems.enumerated() {
                let base = key + 1
                key += UInt64(perRound)
                var intended = [UInt64](repeating: 0, count: perRound)
                let start = SystemClock.monotonicNanoseconds() + 5_000_000
                var next = 0
                var acked = 0
                let give = start + UInt64(perRound) * interval + 3_000_000_000
                while acked < perRound && SystemClock.monotonicNanoseconds() < give {
                    let now = SystemClock.monotonicNanoseconds()
                    if next < perRound && now >= start + UInt64(next) * interval {
                        intended[next] = start + UInt64(next) * interval
                        lags[index].append(now - intended[next])
                        try system.1(base + UInt64(next))
                        next += 1
                        continue
                    }
                    while let frames = try ack.receiveFrames(dontWait: true) {
                        guard let first = frames.first, let reply = Ack(first), reply.key >= base,
                            reply.key < base + UInt64(perRound)
                        else { continue }
                        latencies[index].append(reply.received &- intended[Int(reply.key - base)])
                        acked += 1
                    }
                    if next < perRound {
                        let due = start + UInt64(next) * interval
                        let now = SystemClock.monotonicNanoseconds()
                        if due > now + 150_000 { usleep(UInt32((due - now - 100_000) / 1000)) }
                    } else {
                        try ackPoller.poll(timeoutMilliseconds: 1)
                    }
                }
                lost[index] += perRound - acked
            }
        }
        for (index, system) in systems.enumerated() {
            figures.append(
                Figure(
                    scenario: "paced", system: system.0, transport: topology.transport, fanout: 1, size: 64,
                    metric: "one-way from intended",
                    mode: "paced \(rate)/s", summary: Summary(latencies[index]), lost: lost[index]))
            if let lag = Summary(lags[index]) {
                progress(
                    String(
                        format: "  %@: driver send lag p50 %.1f µs, p99 %.1f µs (included in the figure)",
                        system.0, lag.p50, lag.p99))
            }
        }
    }
}
