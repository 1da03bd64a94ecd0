import Foundation

/// What a benchmark run measures, and how much.
struct Settings: Sendable {
    var quick = false
    var samples = 10_000
    var warmup = 1000
    /// Each system's samples are taken in this many turns, the systems one after the other in each, so
    /// that all of them meet the machine in the same states (on these shared 2-core machines a raw
    /// subscriber's CPU per event moved 2× between runs; four turns left the ratios ±0.15× apart).
    var rounds = 20
    var fanouts = [1, 4, 16]
    var sizes = [64, 1024]
    var transports = ["ipc", "tcp"]
    var throughputEvents = 200_000
    /// Throughput bursts per system, the systems taking turns (a row is the median burst).
    var throughputRounds = 5
    var pacedRate = 2000
    var output = URL(fileURLWithPath: "bench/results")
    var only: String?
    /// Run the broker with a state directory: every event goes to the durable journal first.
    var durable = false
    /// Also run a second Lifeline broker with CURVE (and a policy), its services and client with
    /// keys, beside the plain one: broadcast and call rows `lifeline+curve`.
    var curve = true
    /// Also run a broker group (a real etcd, three members, one subscriber service) beside the single
    /// broker: broadcast N=1 and batched throughput rows `lifeline group`, compared with `lifeline`.
    var group = false

    static let quickRun: Settings = {
        var settings = Settings()
        settings.quick = true
        settings.samples = 1500
        settings.warmup = 200
        settings.rounds = 6
        settings.throughputEvents = 50_000
        settings.throughputRounds = 3
        return settings
    }()

    func wants(_ scenario: String) -> Bool {
        only.map { $0.split(separator: ",").contains { scenario.contains($0) } } ?? true
    }
}
