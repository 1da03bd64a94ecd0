import Lifeline
import LifelineSupport

/// The options of each `lifeline-bench` role, declared once for parsing and for the usage text.
enum BenchOptions {
    static let quick = CommandLineOption.flag("--quick", help: "a short run (fewer samples and rounds)")
    static let durable = CommandLineOption.flag("--durable", help: "also measure a broker with --state-dir")
    static let output = CommandLineOption.value(
        "--out", "DIR", help: "where results.json, table.txt and the charts go (default bench/results)")
    static let only = CommandLineOption.value(
        "--only", "SCENARIO,…",
        help:
            "broadcast, roundtrip, throughput, paced, sustained or guaranteed, or several, comma-separated (default: all)"
    )
    static let transports = CommandLineOption.value("--transports", "T,T", help: "ipc, tcp or both (default)")
    static let noCurve = CommandLineOption.flag("--no-curve", help: "skip the CURVE rows")
    static let group = CommandLineOption.flag(
        "--group",
        help: "also measure a three-broker group (needs etcd): broadcast N=1 and batched throughput")
    static let samples = CommandLineOption.value("--samples", "N", help: "events per latency measurement")
    static let rounds = CommandLineOption.value("--rounds", "N", help: "interleaved rounds per scenario")
    static let fanouts = CommandLineOption.value(
        "--fanouts", "N,N", help: "subscriber counts (default 1,4,16)")
    static let sizes = CommandLineOption.value(
        "--sizes", "B,B", help: "payload sizes in bytes (default 64,1024)")

    static let broker = CommandLineOption.value("--broker", "EP", help: "the broker to publish to")
    static let count = CommandLineOption.value("--count", "N", help: "events to publish")
    static let window = CommandLineOption.value("--window", "N", help: "publishes in flight at most")
    static let noReply = CommandLineOption.flag("--no-reply", help: "publish without asking for receipts")
    static let rate = CommandLineOption.value(
        "--rate", "N",
        help: "publish N events a second, one to a PUBLISH without receipts (the console's cost)")
    static let batch = CommandLineOption.value("--batch", "N", help: "events per PUBLISH")
    static let posts = CommandLineOption.flag(
        "--posts", help: "a loop of LifelineClient.post, one event per call (coalesced by the client)")
    static let event = CommandLineOption.value("--event", "NAME", help: "the event to publish (bench.blast)")
    static let iterations = CommandLineOption.value(
        "--iterations", "N", help: "iterations per micro-benchmark")

    static let record = CommandLineOption.value(
        "--record", "FILE", help: "where the consumer records each event it handled (appended)")
    static let index = CommandLineOption.value("--index", "N", help: "this subscriber's number in acks")
    static let ack = CommandLineOption.value("--ack", "EP", help: "the driver's PULL endpoint for acks")
    static let events = CommandLineOption.value("--events", "A,B", help: "events handled inline")
    static let poolEvents = CommandLineOption.value(
        "--pool-events", "A,B", help: "events handled the default way, on the service's handler thread")
    static let typedEvents = CommandLineOption.value(
        "--typed-events", "A,B", help: "events handled by typed handlers (typed.n1, typed.n4, typed.n16)")
    static let skeletonEvents = CommandLineOption.value(
        "--skeleton-events", "A,B",
        help: "events handled as the pool row, plus a typed decode that reads nothing (Codable's own cost)")
    static let keyed = CommandLineOption.flag(
        "--keyed", help: "host EchoActor by key as 'bench-keyed' (the actor-by-key call rows), nothing else")
    static let kind = CommandLineOption.value(
        "--kind", "KIND", help: "pubsub (XSUB/XPUB) or reqrep (ROUTER/DEALER)")
    static let frontend = CommandLineOption.value("--frontend", "EP", help: "the proxy's frontend endpoint")
    static let backend = CommandLineOption.value("--backend", "EP", help: "the proxy's backend endpoint")
    static let connect = CommandLineOption.value("--connect", "EP[,EP]", help: "endpoints to connect to")
    static let topics = CommandLineOption.value("--topics", "A,B", help: "topics to subscribe to")
    static let bind = CommandLineOption.value("--bind", "EP", help: "the endpoint to bind")
    static let server = CommandLineOption.value(
        "--server", "HOST:PORT", help: "the NATS or Redis server (a path for Redis's Unix socket)")

    static let seconds = CommandLineOption.value("--seconds", "S", help: "length of each round (default 5)")
    static let callers = CommandLineOption.value(
        "--callers", "N", help: "threads calling at once (default 4)")
    static let work = CommandLineOption.value(
        "--work-ms", "MS", help: "milliseconds of CPU per call (default 2)")

    static let before = CommandLineOption.value(
        "--before", "DIR", help: "a run of the earlier revision (repeat for each run)")
    static let after = CommandLineOption.value(
        "--after", "DIR", help: "a run of this revision (repeat for each run)")

    /// The options `role` reads.
    static func declared(for role: String) -> [CommandLineOption] {
        switch role {
        case "run":
            [quick, durable, output, only, transports, noCurve, group, samples, rounds, fanouts, sizes]
        case "blast": [broker, count, window, noReply, batch, posts, event, rate]
        case "micro", "paths": [iterations]
        case "replicas": [rounds, seconds, callers, work]
        case "compare": [before, after]
        case "service":
            [index, ack, events, poolEvents, typedEvents, skeletonEvents, keyed]
                + ServiceRunner.Options.declared
        case "proxy": [kind, frontend, backend]
        case "subscriber": [index, connect, topics, ack]
        case "echo": [bind]
        case "worker": [connect]
        case "nats-subscriber", "redis-subscriber": [index, server, topics, ack]
        case "nats-responder": [server]
        case "lifeline-consumer": [index, ack, record] + ServiceRunner.Options.declared
        case "jetstream-consumer", "redis-stream-consumer": [index, ack, server, record]
        default: []
        }
    }
}
