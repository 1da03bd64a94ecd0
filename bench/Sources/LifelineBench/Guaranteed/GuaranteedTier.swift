import Foundation
import Glibc
import Lifeline
import LifelineSupport

/// The guaranteed tier: Lifeline's acknowledged publish to a broker with a state directory and a
/// subscriber that records what it handled and resumes by cursor, beside JetStream (file storage, one
/// replica, a durable push consumer with explicit acks) and Redis Streams (`appendonly yes`,
/// `appendfsync everysec`; XREADGROUP and XACK), on loopback TCP. Each system in turn: publish-ack
/// round trips one at a time, then streams published with a window of acknowledgements in flight
/// (their publish rate, and the rate at which the consumer has handled them all), the systems taking
/// turns burst by burst, then a stream during which the consumer is killed with SIGKILL and
/// restarted — and each consumer's record is counted: every acknowledged event handled (lost 0),
/// and how many handled twice.
struct GuaranteedTier {
    /// One system under test: its publisher, and how to start (again) its consumer.
    struct System {
        let name: String
        let publisher: any DurablePublisher
        let servers: [Child]
        let startConsumer: () throws -> Child
        let record: String
    }

    let driver: Driver
    let logs: URL
    let work: URL
    /// Round trips, and events per stream.
    let samples: Int
    let streamEvents: Int
    let window = 256

    init(driver: Driver) throws {
        self.driver = driver
        work = driver.work.appendingPathComponent("guaranteed")
        logs = work.appendingPathComponent("logs")
        try FileManager.default.createDirectory(at: logs, withIntermediateDirectories: true)
        samples = driver.settings.quick ? 2000 : 10_000
        streamEvents = driver.settings.quick ? 20_000 : 100_000
    }

    func run() throws {
        let group = ProcessGroup()
        defer { group.stop() }
        var systems: [System] = []
        for make in [lifeline, jetstream, redis, lifelineGroup, jetstreamCluster] {
            do {
                if let system = try make(group) { systems.append(system) }
            } catch {
                driver.progress("guaranteed tier: \(error); that system's rows are skipped")
            }
        }
        // Publish-ack round trips, one at a time, the systems taking turns round by round (A B C A B C):
        // the machine's drift falls on all alike.
        var runs: [SystemRun] = []
        for system in systems {
            do {
                runs.append(SystemRun(system, consumer: try system.startConsumer()))
            } catch {
                driver.progress("guaranteed tier: \(system.name): \(error); its rows are skipped")
            }
        }
        let rounds = max(1, driver.settings.rounds)
        driver.progress("guaranteed tier: publish-ack round trips, \(rounds) interleaved rounds ...")
        for round in 0..<rounds {
            for run in runs where run.failure == nil {
                do {
                    // The first round starts with a tenth more, not counted: connections and files warm up.
                    try roundTrips(run, count: samples / rounds, warmup: round == 0 ? samples / 10 : 0)
                } catch {
                    run.failure = "\(error)"
                    driver.progress("guaranteed tier: \(run.system.name) failed: \(error)")
                }
            }
        }
        for run in runs where run.failure == nil {
            var rtt = figure(run.system, "publish-ack")
            rtt.summary = Summary(run.roundTrips)
            driver.figures.append(rtt)
        }
        // The streams in bursts, the systems taking turns (each round starting one system further
        // on), so that a slow moment of the machine falls on all alike; a row is the median burst.
        let bursts = max(1, driver.settings.throughputRounds)
        driver.progress(
            "guaranteed tier: streams of \(streamEvents) events per system in \(bursts) interleaved bursts ..."
        )
        for run in runs where run.failure == nil {
            _ = try waitUntilHandled(run.published, record: run.system.record, seconds: 30)
        }
        for round in 0..<bursts {
            for offset in runs.indices {
                let run = runs[(offset + round) % runs.count]
                guard run.failure == nil else { continue }
                do {
                    try burst(run, events: max(1, streamEvents / bursts))
                } catch {
                    run.failure = "\(error)"
                    driver.progress("guaranteed tier: \(run.system.name) failed: \(error)")
                }
            }
        }
        for run in runs where run.failure == nil { appendStreamFigures(run) }
        for run in runs where run.failure == nil {
            driver.progress("guaranteed tier: \(run.system.name): a consumer kill ...")
            do {
                try killConsumer(run)
            } catch {
                driver.progress("guaranteed tier: \(run.system.name) failed: \(error)")
            }
        }
    }

    /// One system's consumer and what was published to it.
    final class SystemRun {
        let system: System
        var consumer: Child
        var published: Set<UInt64> = []
        var key: UInt64
        var roundTrips: [UInt64] = []
        var bursts: [Burst] = []
        var failure: String?

        init(_ system: System, consumer: Child) {
            self.system = system
            self.consumer = consumer
            key = UInt64(system.name.count) << 40
        }
    }

    private func roundTrips(_ run: SystemRun, count: Int, warmup: Int) throws {
        for index in 0..<(warmup + count) {
            run.key += 1
            let start = SystemClock.monotonicNanoseconds()
            try run.system.publisher.send(run.key)
            try run.system.publisher.flush()
            try run.system.publisher.receiveAcknowledgement()
            if index >= warmup { run.roundTrips.append(SystemClock.monotonicNanoseconds() - start) }
            run.published.insert(run.key)
        }
    }

    func start(_ group: ProcessGroup, _ name: String, _ executable: URL, _ arguments: [String]) throws
        -> Child
    {
        let child = try Child(name, executable: executable, arguments: arguments, logDirectory: logs)
        group.children.append(child)
        return child
    }

    func consumer(_ group: ProcessGroup, _ role: String, _ arguments: [String]) -> () throws -> Child {
        var generation = 0
        let ackEndpoint = driver.ackEndpoint
        return { [self] in
            generation += 1
            let child = try start(
                group, "\(role)-\(generation)", driver.binaries.appendingPathComponent("lifeline-bench"),
                [role, "--index", "900", "--ack", ackEndpoint] + arguments)
            _ = try child.waitForReady()
            return child
        }
    }

    private func lifeline(_ group: ProcessGroup) throws -> System? {
        let broker = try start(
            group, "lifeline-broker", driver.binaries.appendingPathComponent("lifeline"),
            [
                "broker", "--control", "tcp://127.0.0.1:*", "--bus", "tcp://127.0.0.1:*", "--state-dir",
                work.appendingPathComponent("lifeline-state").path,
                // A journal that keeps the whole run for replay, as the stream and Redis keep theirs
                // (the default keeps 10 000 events: a consumer down for longer gets a gap notice).
                "--journal-size", "10000000", "--journal-bytes", "4294967296",
            ])
        let control = try broker.waitForReady()["control"] ?? ""
        let record = work.appendingPathComponent("lifeline.record").path
        return System(
            name: "lifeline", publisher: try LifelinePublisher(broker: control), servers: [broker],
            startConsumer: consumer(group, "lifeline-consumer", ["--broker", control, "--record", record]),
            record: record)
    }

    private func jetstream(_ group: ProcessGroup) throws -> System? {
        guard let executable = PeerServer.executable("nats-server") else {
            driver.progress(
                "guaranteed tier: nats-server is not installed (apt-get install -y nats-server): no JetStream rows"
            )
            return nil
        }
        let address = "127.0.0.1:\(try PeerServer.freePort())"
        let configuration = work.appendingPathComponent("jetstream.conf")
        try Data("ping_interval: \"60m\"\n".utf8).write(to: configuration)
        let server = try start(
            group, "nats-server-js", executable,
            [
                "-c", configuration.path, "-a", "127.0.0.1", "-p", String(address.split(separator: ":")[1]),
                "-js",
                "-sd", work.appendingPathComponent("jetstream-store").path,
            ])
        try PeerServer.waitUntilListening("nats-server -js") { _ = try NATSConnection(address) }
        let publisher = try JetStreamPublisher(server: address)
        let record = work.appendingPathComponent("jetstream.record").path
        return System(
            name: "jetstream", publisher: publisher, servers: [server],
            startConsumer: consumer(group, "jetstream-consumer", ["--server", address, "--record", record]),
            record: record)
    }

    private func redis(_ group: ProcessGroup) throws -> System? {
        guard let executable = PeerServer.executable("redis-server") else {
            driver.progress(
                "guaranteed tier: redis-server is not installed (apt-get install -y redis-server): no Redis Streams rows"
            )
            return nil
        }
        let port = try PeerServer.freePort()
        let directory = work.appendingPathComponent("redis-data")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let server = try start(
            group, "redis-server-aof", executable,
            [
                "--bind", "127.0.0.1", "--port", "\(port)", "--save", "", "--appendonly", "yes",
                "--appendfsync",
                "everysec", "--dir", directory.path,
            ])
        let address = "127.0.0.1:\(port)"
        try PeerServer.waitUntilListening("redis-server") { _ = try RedisConnection(address) }
        let publisher = try RedisStreamPublisher(server: address)
        let record = work.appendingPathComponent("redis.record").path
        return System(
            name: "redis streams", publisher: publisher, servers: [server],
            startConsumer: consumer(
                group, "redis-stream-consumer", ["--server", address, "--record", record]),
            record: record)
    }

    // MARK: Measuring

    private func figure(_ system: System, _ metric: String) -> Figure {
        Figure(
            scenario: "guaranteed", system: system.name, transport: "tcp", fanout: 1, size: 64,
            metric: metric,
            mode: "persisted before the acknowledgement, not synced; consumer records then acks")
    }

    /// One stream of a system: its publish rate, when its consumer had it all, and the CPU each side
    /// spent on it.
    struct Burst {
        var publishRate: Double
        var handledRate: Double?
        var serverCPU: Double
        var consumerCPU: Double
    }

    /// Streams `events` with ``window`` publishes in flight and waits until the consumer has handled
    /// them all.
    private func burst(_ run: SystemRun, events: Int) throws {
        let system = run.system
        drainAcks()
        let serverCPU = system.servers.map(\.cpuMicroseconds).reduce(0, +)
        let consumerCPU = run.consumer.cpuMicroseconds
        let keys = (run.key + 1)...(run.key + UInt64(events))
        let start = SystemClock.monotonicNanoseconds()
        try stream(system.publisher, keys: keys)
        let published = SystemClock.monotonicNanoseconds()
        run.key = keys.upperBound
        for key in keys { run.published.insert(key) }
        let lastHandled = try lastAck(of: keys, seconds: 60)
        let count = Double(events)
        let measured = Burst(
            publishRate: count / (Double(published - start) / 1e9),
            handledRate: lastHandled.map { count / (Double($0 - start) / 1e9) },
            serverCPU: (system.servers.map(\.cpuMicroseconds).reduce(0, +) - serverCPU) / count,
            consumerCPU: (run.consumer.cpuMicroseconds - consumerCPU) / count)
        run.bursts.append(measured)
        driver.progress(
            String(
                format:
                    "  %@: %.0f events/s acknowledged, %@ handled; CPU µs per event: server %.1f, consumer %.1f",
                system.name, measured.publishRate,
                measured.handledRate.map { String(format: "%.0f/s", $0) } ?? "not all",
                measured.serverCPU, measured.consumerCPU))
    }

    /// A system's stream rows: the median burst, each burst's rate kept (ratios are the median of the
    /// rounds' ratios).
    private func appendStreamFigures(_ run: SystemRun) {
        let bursts = run.bursts
        guard !bursts.isEmpty else { return }
        let serverCPU = Driver.median(bursts.map(\.serverCPU))
        var publishRate = figure(run.system, "publish, acked")
        publishRate.rate = Driver.median(bursts.map(\.publishRate))
        publishRate.rates = bursts.map(\.publishRate)
        publishRate.brokerCPU = serverCPU
        driver.figures.append(publishRate)
        var endToEnd = figure(run.system, "end to end, handled")
        let handled = bursts.compactMap(\.handledRate)
        if handled.count == bursts.count {
            endToEnd.rate = Driver.median(handled)
            endToEnd.rates = handled
        }
        endToEnd.brokerCPU = serverCPU
        endToEnd.subscriberCPU = Driver.median(bursts.map(\.consumerCPU))
        driver.figures.append(endToEnd)
    }

    /// A stream during which the consumer is killed -9 (once it has handled a quarter of it,
    /// publishing going on) and started again: is every acknowledged event of the run handled, and
    /// how many twice?
    private func killConsumer(_ run: SystemRun) throws {
        let system = run.system
        drainAcks()
        let crash = (run.key + 1)...(run.key + UInt64(streamEvents))
        run.key = crash.upperBound
        var handled = Set<UInt64>()
        var alive = true
        let consumer = run.consumer
        try stream(system.publisher, keys: crash) {
            guard alive else { return }
            while let ack = try driver.receiveAck(until: 0) {
                if crash.contains(ack.key) { handled.insert(ack.key) }
            }
            if handled.count >= streamEvents / 4 {
                kill(consumer.process.processIdentifier, SIGKILL)
                alive = false
            }
        }
        for streamed in crash { run.published.insert(streamed) }
        if alive { kill(consumer.process.processIdentifier, SIGKILL) }
        consumer.process.waitUntilExit()
        drainAcks()
        run.consumer = try system.startConsumer()
        let counts = try waitUntilHandled(run.published, record: system.record, seconds: 60)
        var killed = figure(system, Figure.consumerKill)
        killed.lost = run.published.filter { counts[$0] == nil }.count
        killed.duplicated = counts.values.filter { $0 > 1 }.count
        driver.figures.append(killed)
        driver.progress(
            "guaranteed tier: \(system.name): \(run.published.count) events acknowledged, consumer killed -9 once: lost \(killed.lost), handled twice \(killed.duplicated)"
        )
        run.consumer.stop()
        drainAcks()
        if killed.lost > 0 {
            // What the processes said, and the consumer's record, kept beside the results.
            let kept = driver.settings.output.appendingPathComponent("guaranteed-logs")
            try? FileManager.default.removeItem(at: kept)
            try? FileManager.default.createDirectory(
                at: driver.settings.output, withIntermediateDirectories: true)
            try? FileManager.default.copyItem(at: logs, to: kept)
            try? FileManager.default.copyItem(
                at: URL(fileURLWithPath: system.record),
                to: kept.appendingPathComponent(URL(fileURLWithPath: system.record).lastPathComponent))
            driver.progress(
                "guaranteed tier: \(system.name) lost events: its logs and record are in \(kept.path)")
        }
    }

    /// Publishes `keys` with at most ``window`` acknowledgements outstanding, until all are acknowledged.
    private func stream(
        _ publisher: any DurablePublisher, keys: ClosedRange<UInt64>, afterEach: () throws -> Void = {}
    ) throws {
        var next = keys.lowerBound
        var outstanding = 0
        while next <= keys.upperBound || outstanding > 0 {
            while next <= keys.upperBound && outstanding < window {
                try publisher.send(next)
                next += 1
                outstanding += 1
            }
            try publisher.flush()
            try publisher.receiveAcknowledgement()
            outstanding -= 1
            try afterEach()
        }
    }

    /// Reads the consumer's reports until every key of `keys` was reported; returns when the last was
    /// handled (nil if not all were within `seconds`).
    private func lastAck(of keys: ClosedRange<UInt64>, seconds: Double) throws -> UInt64? {
        var seen = Set<UInt64>()
        var last: UInt64 = 0
        let deadline = SystemClock.monotonicNanoseconds() + UInt64(seconds * 1e9)
        while seen.count < keys.count, let ack = try driver.receiveAck(until: deadline) {
            guard keys.contains(ack.key) else { continue }
            seen.insert(ack.key)
            last = max(last, ack.received)
        }
        return seen.count == keys.count ? last : nil
    }

    /// Reads the record until it holds every key of `keys` (or `seconds` passed); returns its counts.
    private func waitUntilHandled(_ keys: Set<UInt64>, record: String, seconds: Double) throws -> [UInt64:
        Int]
    {
        let deadline = SystemClock.monotonicNanoseconds() + UInt64(seconds * 1e9)
        while true {
            drainAcks()
            let counts = HandledRecord.handledKeys(at: record)
            if keys.allSatisfy({ counts[$0] != nil }) || SystemClock.monotonicNanoseconds() > deadline {
                return counts
            }
            usleep(100_000)  // the consumer's file, read again until it holds them all or time is up
        }
    }

    private func drainAcks() {
        while (try? driver.receiveAck(until: 0)) ?? nil != nil {}
    }
}
