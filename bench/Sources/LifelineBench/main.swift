// lifeline-bench: the dispatch-latency benchmark (`lifeline-bench run`, via bench/run.sh) and the
// roles it starts as separate processes.
import Foundation
import Lifeline
import LifelineProtocol
import LifelineSupport

let role = CommandLine.arguments.dropFirst().first ?? "help"
let shownRole = BenchOptions.declared(for: role).isEmpty ? "run" : role
let usage = """
    usage: lifeline-bench run [options]
           lifeline-bench blast|micro|paths [options]   (paths: each fast path against its general path)
           lifeline-bench replicas [options]   (bench/replicas.sh: calls/s of 1 and 2 instances)
           lifeline-bench compare --before DIR ... --after DIR ...   (bench/compare.sh)
           lifeline-bench service|proxy|subscriber|echo|worker ...   (started by 'run')
           lifeline-bench lifeline-consumer|jetstream-consumer|redis-stream-consumer ...   (the guaranteed tier's)

    Scenarios: broadcast, roundtrip, throughput, paced, sustained, guaranteed. Results: a table on stdout, DIR/results.json,
    DIR/table.txt and SVG charts (DIR defaults to bench/results).

    \(shownRole) options:
    \(CommandLineOption.helpText(BenchOptions.declared(for: shownRole)))
    """

var arguments = CommandLineArguments(
    Array(CommandLine.arguments.dropFirst(2)), declaring: BenchOptions.declared(for: role))
do {
    switch role {
    case "run":
        var settings = arguments.flag(BenchOptions.quick) ? Settings.quickRun : Settings()
        if let output = try arguments.option(BenchOptions.output) {
            settings.output = URL(fileURLWithPath: output)
        }
        settings.only = try arguments.option(BenchOptions.only)
        settings.durable = arguments.flag(BenchOptions.durable)
        if arguments.flag(BenchOptions.noCurve) { settings.curve = false }
        settings.group = arguments.flag(BenchOptions.group)
        if let transports = try arguments.option(BenchOptions.transports) {
            settings.transports = transports.split(separator: ",").map(String.init)
        }
        if let samples = try arguments.integer(BenchOptions.samples, in: 10...10_000_000) {
            settings.samples = samples
        }
        if let rounds = try arguments.integer(BenchOptions.rounds, in: 1...1000) { settings.rounds = rounds }
        if let fanouts = try arguments.option(BenchOptions.fanouts) {
            settings.fanouts = fanouts.split(separator: ",").compactMap { Int($0) }
        }
        if let sizes = try arguments.option(BenchOptions.sizes) {
            settings.sizes = sizes.split(separator: ",").compactMap { Int($0) }
        }
        try arguments.finish()
        let started = SystemClock.monotonicNanoseconds()
        let driver = try Driver(settings: settings)
        try driver.run()
        let report = Report(
            figures: driver.figures, settings: settings,
            elapsed: Double(SystemClock.monotonicNanoseconds() - started) / 1e9)
        Console.out(report.table)
        try report.write(to: settings.output)
        Console.error(
            String(format: "bench: done in %.0f s; results in %@", report.elapsed, settings.output.path))
    case "blast":
        let broker = try arguments.option(BenchOptions.broker) ?? "tcp://127.0.0.1:7200"
        let count = try arguments.integer(BenchOptions.count, in: 1...100_000_000) ?? 100_000
        let window = try arguments.integer(BenchOptions.window, in: 1...1_000_000) ?? 1000
        let noReply = arguments.flag(BenchOptions.noReply)
        if let rate = try arguments.integer(BenchOptions.rate, in: 1...10_000_000) {
            let reached = try Blast.paced(
                broker: broker, count: count, rate: rate,
                event: try arguments.option(BenchOptions.event) ?? "bench.blast")
            Console.out(String(format: "%.0f events/s (paced at %d/s)", reached, rate))
            break
        }
        if arguments.flag(BenchOptions.posts) {
            let rate = try Blast.posts(
                broker: broker, count: count, event: try arguments.option(BenchOptions.event) ?? "bench.blast"
            )
            Console.out(String(format: "%.0f events/s (a loop of post, then flush)", rate))
            break
        }
        if let batch = try arguments.integer(BenchOptions.batch, in: 1...10_000) {
            let rate = try Blast.batched(
                broker: broker, count: count, batch: batch, window: window,
                event: try arguments.option(BenchOptions.event) ?? "bench.blast")
            Console.out(String(format: "%.0f events/s (batches of %d, window %d)", rate, batch, window))
            break
        }
        let rate = try Blast.run(
            broker: broker, count: count, window: window,
            event: try arguments.option(BenchOptions.event) ?? "bench.blast", reply: !noReply)
        Console.out(
            String(format: "%.0f publishes/s (window %d%@)", rate, window, noReply ? ", no reply" : ""))
    case "micro":
        for (name, nanoseconds) in try Micro.run(
            iterations: try arguments.integer(BenchOptions.iterations, in: 1000...100_000_000) ?? 200_000)
        {
            Console.out(String(format: "%9.0f ns  %@", nanoseconds, name))
        }
    case "paths":
        let rows = try FastPaths.run(
            iterations: try arguments.integer(BenchOptions.iterations, in: 1000...100_000_000) ?? 200_000)
        try arguments.finish()
        Console.out(FastPaths.table(rows))
    case "replicas":
        let rounds = try arguments.integer(BenchOptions.rounds, in: 1...100) ?? 3
        let seconds = try arguments.integer(BenchOptions.seconds, in: 1...600) ?? 5
        let callers = try arguments.integer(BenchOptions.callers, in: 1...64) ?? 4
        let work = try arguments.integer(BenchOptions.work, in: 1...1000) ?? 2
        try arguments.finish()
        let results = try Replicas.run(rounds: rounds, seconds: Double(seconds), callers: callers, work: work)
        Console.out(Replicas.summary(results))
    case "compare":
        let before = try arguments.options(BenchOptions.before)
        let after = try arguments.options(BenchOptions.after)
        try arguments.finish()
        guard !before.isEmpty, !after.isEmpty else {
            throw UsageError("compare needs --before DIR and --after DIR")
        }
        Console.out(Compare.table(before: try before.map(Compare.load), after: try after.map(Compare.load)))
    case "service":
        let serviceArguments = arguments
        Task { await Roles.service(serviceArguments) }
        dispatchMain()
    case "proxy": try Roles.proxy(&arguments)
    case "subscriber": try Roles.subscriber(&arguments)
    case "echo": try Roles.echo(&arguments)
    case "worker": try Roles.worker(&arguments)
    case "nats-subscriber": try PeerRoles.natsSubscriber(&arguments)
    case "redis-subscriber": try PeerRoles.redisSubscriber(&arguments)
    case "nats-responder": try PeerRoles.natsResponder(&arguments)
    case "lifeline-consumer":
        let consumerArguments = arguments
        Task { await DurableConsumers.lifeline(consumerArguments) }
        dispatchMain()
    case "jetstream-consumer": try DurableConsumers.jetstream(&arguments)
    case "redis-stream-consumer": try DurableConsumers.redis(&arguments)
    default:
        Console.out(usage)
        exit(role == "help" || role == "--help" ? 0 : 2)
    }
} catch let error as UsageError {
    Console.error("lifeline-bench: \(error.message)\n\(usage)")
    exit(2)
} catch {
    Console.error("lifeline-bench: \(error)")
    exit(1)
}
