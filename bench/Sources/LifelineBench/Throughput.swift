import Glibc
import Lifeline
import LifelineProtocol
import LifelineSupport
import ZeroMQ

extension Driver {
    /// One system of the throughput scenario: its row, and a burst of the run's events through it.
    private struct ThroughputSystem {
        let system: String
        let label: String
        let mode: String
        /// The topology's roles of its server (none for a system without one) and its subscribers.
        let roles: (server: String, subscribers: String)
        /// Sends one burst (the events made before its clock starts) and returns what it measured.
        let burst: () throws -> ThroughputBurst
    }

    /// One burst's figures.
    private struct ThroughputBurst {
        /// Events per second until the last event reached the subscriber (0 when it never did).
        var rate: Double
        /// Events per second until the publisher was done (answered, or handed to its socket).
        var publisherRate: Double
        var lost: Int
        /// CPU per event (µs) of the publishing process (this driver, with its client's threads), the
        /// server and the subscriber.
        var cpu = (publisher: 0.0, server: 0.0, subscriber: 0.0)
    }

    /// Bursts of `throughputEvents` events of 64 B to one subscriber, through every system, in
    /// `throughputRounds` rounds: each round sends one burst through each system, starting one system
    /// further on than the round before, so that a slow moment of the machine falls on all of them.
    /// A system's row is its median burst; its ratio to NATS the median of the rounds' ratios.
    func throughput(_ topology: BenchTopology) throws {
        let total = settings.throughputEvents
        let rounds = settings.throughputRounds
        progress(
            "throughput \(topology.transport): \(total) events of 64 B to one subscriber, per system, \(rounds) interleaved rounds"
        )
        let (systems, clients) = try throughputSystems(topology, total: total)
        defer { AsyncBridge.run { for client in clients { await client.close() } } }
        var bursts: [String: [ThroughputBurst]] = [:]
        for round in 0..<rounds {
            for offset in systems.indices {
                let system = systems[(offset + round) % systems.count]
                let before = (
                    Self.ownCPU(), topology.cpu(system.roles.server),
                    topology.cpu(system.roles.subscribers, first: 1)
                )
                var burst = try system.burst()
                let events = Double(total)
                burst.cpu = (
                    (Self.ownCPU() - before.0) / events,
                    (topology.cpu(system.roles.server) - before.1) / events,
                    (topology.cpu(system.roles.subscribers, first: 1) - before.2) / events
                )
                progress(
                    String(
                        format:
                            "  round %d, %@: %.0f events/s delivered, publisher done at %.0f/s, %d lost; CPU µs per event: publisher %.2f, server %.2f, subscriber %.2f",
                        round + 1, system.label, burst.rate, burst.publisherRate, burst.lost,
                        burst.cpu.publisher,
                        burst.cpu.server, burst.cpu.subscriber))
                bursts[system.system, default: []].append(burst)
            }
        }
        for system in systems {
            let measured = bursts[system.system] ?? []
            figures.append(
                Figure(
                    scenario: "throughput", system: system.system, transport: topology.transport, fanout: 1,
                    size: 64, metric: "events/s", mode: system.mode,
                    rate: Self.median(measured.map(\.rate)), rates: measured.map(\.rate),
                    lost: measured.map(\.lost).reduce(0, +),
                    brokerCPU: system.roles.server.isEmpty ? nil : Self.median(measured.map(\.cpu.server)),
                    subscriberCPU: Self.median(measured.map(\.cpu.subscriber)),
                    publisherCPU: Self.median(measured.map(\.cpu.publisher))))
        }
    }

    /// CPU used so far by this process, all its threads, in microseconds.
    private static func ownCPU() -> Double {
        var time = timespec()
        guard clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &time) == 0 else { return 0 }
        return Double(time.tv_sec) * 1_000_000 + Double(time.tv_nsec) / 1000
    }

    static func median(_ values: [Double]) -> Double {
        let sorted = values.sorted()
        guard !sorted.isEmpty else { return 0 }
        let middle = sorted.count / 2
        return sorted.count % 2 == 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2
    }

    /// The systems, and the clients they publish with (to close when the scenario is done).
    private func throughputSystems(_ topology: BenchTopology, total: Int) throws
        -> ([ThroughputSystem], [LifelineClient])
    {
        let publisher = try ZMQSocket(ZMQContext.shared, type: .dealer)
        try publisher.set(.sendHighWaterMark, 0)
        try publisher.set(.receiveHighWaterMark, 0)
        try publisher.connect(topology.brokerControl)
        var replies = ZMQPoller()
        replies.add(publisher)
        let topic = Array("bench.n1".utf8) + [0]
        let version = Array(ProtocolID.control.utf8)
        let command = Array(Command.publish.rawValue.utf8)

        let lifelineSend: (UInt64) throws -> Void = { key in
            _ = try topology.client.publish("bench.n1", payload: Payload.json(key: key, size: 64))
        }
        let proxySend: (UInt64) throws -> Void = { key in
            try topology.proxyPub.send(frames: [topic, Payload.json(key: key, size: 64)])
        }
        var systems: [ThroughputSystem] = []

        // Lifeline: a pipelined publisher keeps up to 1000 PUBLISH requests outstanding; then one that
        // asks for no reply (PUBLISH "reply": false), as fast as its socket accepts.
        for replied in [true, false] {
            let header = JSONWriter.encode(
                replied ? ["event": "bench.n1"] : ["event": "bench.n1", "reply": false])
            systems.append(
                ThroughputSystem(
                    system: replied ? "lifeline" : "lifeline no-reply",
                    label: replied ? "lifeline" : "lifeline (no reply)",
                    mode: replied ? "open-loop, 1000 replies outstanding" : "open-loop, PUBLISH reply:false",
                    roles: ("lifeline broker", "lifeline subscribers")
                ) {
                    let before = try self.synchronize("throughput lifeline", expected: 1, send: lifelineSend)
                    let first = self.nextKey()
                    self.key += UInt64(total - 1)
                    // Payloads and ids are made before the clock starts (for every system): the bus is
                    // measured, not the payload generator.
                    let payloads = (0..<total).map {
                        Payload.json(key: first + UInt64($0), size: 64, quiet: $0 < total - 1)
                    }
                    let ids = (0..<total).map { Array(String(first + UInt64($0)).utf8) }
                    let start = SystemClock.monotonicNanoseconds()
                    var sent = 0
                    var answered = replied ? 0 : total
                    while sent < total || answered < total {
                        while sent < total && (!replied || sent - answered < 1000) {
                            let frames = [version, command, ids[sent], header, payloads[sent]]
                            guard try publisher.send(frames: frames, dontWait: true) else { break }
                            sent += 1
                        }
                        guard replied else { continue }
                        var drained = false
                        while try publisher.receiveFrames(dontWait: true) != nil {
                            answered += 1
                            drained = true
                        }
                        if !drained && sent - answered >= 1000 { try replies.poll(timeoutMilliseconds: 1) }
                    }
                    return try self.arrival(
                        total: total, start: start, lastKey: first + UInt64(total - 1), countBefore: before)
                })
        }

        // Lifeline, batched: publish(contentsOf:), 1000 events to a PUBLISH, 4 batches outstanding.
        let batching = LifelineClient(broker: topology.brokerControl, credentials: nil)
        var clients = [batching]
        systems.append(
            lifelineEvents(
                topology, total: total, system: "lifeline batched", label: "lifeline (batched)",
                mode: "publish(contentsOf:), 1000 events per PUBLISH, 4 PUBLISH outstanding",
                send: lifelineSend
            ) { events in
                _ = try AsyncBridge.run {
                    try await batching.publish(
                        contentsOf: events, batchSize: 1000, window: 4, timeout: .seconds(30))
                }
            })

        // The same batches to a three-broker group's leader: each PUBLISH answered, and its events
        // sent, once a majority holds them.
        if let group = topology.groupClient, let leader = topology.groupLeader {
            let leading = LifelineClient(broker: leader, credentials: nil)
            clients.append(leading)
            systems.append(
                lifelineEvents(
                    topology, total: total, system: "lifeline group batched",
                    label: "lifeline group (batched)",
                    mode:
                        "publish(contentsOf:) to a group's leader, 1000 events per PUBLISH, 4 PUBLISH outstanding",
                    roles: ("lifeline group broker", "lifeline group subscribers"),
                    send: { key in
                        _ = try group.publish("bench.n1", payload: Payload.json(key: key, size: 64))
                    }
                ) { events in
                    _ = try AsyncBridge.run {
                        try await leading.publish(
                            contentsOf: events, batchSize: 1000, window: 4, timeout: .seconds(30))
                    }
                })
        }

        // Lifeline, one event per call from a loop: LifelineClient.post, the connection coalescing
        // what comes while a PUBLISH is out (no batching in the caller's code).
        let client = LifelineClient(broker: topology.brokerControl, credentials: nil)
        clients.append(client)
        systems.append(
            lifelineEvents(
                topology, total: total, system: "lifeline loop", label: "lifeline (loop of post)",
                mode: "a loop of LifelineClient.post, one event per call, coalesced by the connection",
                send: lifelineSend
            ) { events in
                try AsyncBridge.run {
                    for event in events { await client.post(event, timeout: .seconds(30)) }
                    try await client.flush()
                }
            })

        // Baseline: PUB -> zmq_proxy -> SUB, as fast as the PUB accepts.
        systems.append(
            ThroughputSystem(
                system: "zmq_proxy", label: "zmq_proxy", mode: "open-loop",
                roles: ("zmq_proxy broker", "zmq subscribers")
            ) {
                let before = try self.synchronize("throughput zmq_proxy", expected: 1, send: proxySend)
                let first = self.nextKey()
                self.key += UInt64(total - 1)
                let payloads = (0..<total).map {
                    Payload.json(key: first + UInt64($0), size: 64, quiet: $0 < total - 1)
                }
                let start = SystemClock.monotonicNanoseconds()
                for payload in payloads { try topology.proxyPub.send(frames: [topic, payload]) }
                return try self.arrival(
                    total: total, start: start, lastKey: first + UInt64(total - 1), countBefore: before)
            })
        // Connected before any clock starts: a client's first burst does not carry its handshake.
        let connecting = clients
        try AsyncBridge.run { for client in connecting { _ = try await client.services() } }
        return (systems + peerThroughputSystems(topology, total: total), clients)
    }

    /// NATS and Redis to one subscriber: every event queued and written in batches of 500 (one
    /// `send` each, as their C clients buffer writes), Redis's replies (an integer per PUBLISH) read
    /// a batch behind.
    private func peerThroughputSystems(_ topology: BenchTopology, total: Int) -> [ThroughputSystem] {
        let subject = Array("bench.n1".utf8)
        let publish = Array("PUBLISH".utf8)
        var peers:
            [(String, queue: ([UInt8]) -> Void, flush: () throws -> Void, replies: (Int) throws -> Void)] = []
        if let nats = topology.nats {
            peers.append(("nats", { nats.publish(subject, $0) }, { try nats.flush() }, { _ in }))
        }
        if let redis = topology.redis {
            peers.append(
                (
                    "redis", { redis.command([publish, subject, $0]) }, { try redis.flush() },
                    { count in for _ in 0..<count { _ = try redis.next() } }
                ))
        }
        let batch = 500
        return peers.map { peer in
            ThroughputSystem(
                system: peer.0, label: peer.0, mode: "open-loop, writes of \(batch) events",
                roles: ("\(peer.0) server", "\(peer.0) subscribers")
            ) {
                let probe: (UInt64) throws -> Void = { key in
                    peer.queue(Payload.json(key: key, size: 64))
                    try peer.flush()
                    try peer.replies(1)
                }
                let before = try self.synchronize("throughput \(peer.0)", expected: 1, send: probe)
                let first = self.nextKey()
                self.key += UInt64(total - 1)
                let payloads = (0..<total).map {
                    Payload.json(key: first + UInt64($0), size: 64, quiet: $0 < total - 1)
                }
                let start = SystemClock.monotonicNanoseconds()
                var pending = 0
                for (index, payload) in payloads.enumerated() {
                    peer.queue(payload)
                    if (index + 1) % batch == 0 || index == total - 1 {
                        try peer.flush()
                        try peer.replies(pending)
                        pending = (index % batch) + 1
                    }
                }
                try peer.replies(pending)
                return try self.arrival(
                    total: total, start: start, lastKey: first + UInt64(total - 1), countBefore: before)
            }
        }
    }

    /// A Lifeline system whose burst hands the events (made before the clock starts) to `publish`.
    private func lifelineEvents(
        _ topology: BenchTopology, total: Int, system: String, label: String, mode: String,
        roles: (server: String, subscribers: String) = ("lifeline broker", "lifeline subscribers"),
        send: @escaping (UInt64) throws -> Void, publish: @escaping ([PublishedEvent]) throws -> Void
    ) -> ThroughputSystem {
        ThroughputSystem(system: system, label: label, mode: mode, roles: roles) {
            let before = try self.synchronize("throughput \(system)", expected: 1, send: send)
            let first = self.nextKey()
            self.key += UInt64(total - 1)
            let events = (0..<total).map { index in
                PublishedEvent(
                    "bench.n1",
                    payload: Payload.json(key: first + UInt64(index), size: 64, quiet: index < total - 1))
            }
            let start = SystemClock.monotonicNanoseconds()
            try publish(events)
            return try self.arrival(
                total: total, start: start, lastKey: first + UInt64(total - 1), countBefore: before)
        }
    }

    /// A burst's figures once its publisher is done (now): the rate until the last event's arrival at
    /// the subscriber, and how many of the burst the subscriber did not count (all of them when the
    /// last never arrived within 10 s).
    private func arrival(total: Int, start: UInt64, lastKey: UInt64, countBefore: UInt64) throws
        -> ThroughputBurst
    {
        let accepted = SystemClock.monotonicNanoseconds()
        var (arrival, count): (UInt64, UInt64) = (0, 0)
        while let ack = try receiveAck(until: SystemClock.monotonicNanoseconds() + 10_000_000_000) {
            if ack.key == lastKey {
                (arrival, count) = (ack.received, ack.count - countBefore)
                break
            }
        }
        return ThroughputBurst(
            rate: arrival > start ? Double(total) / (Double(arrival - start) / 1e9) : 0,
            publisherRate: Double(total) / (Double(accepted - start) / 1e9), lost: total - Int(count))
    }
}
