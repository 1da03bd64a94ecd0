/// One measured figure of the benchmark.
struct Figure: Sendable {
    var scenario: String
    var system: String
    var transport: String
    var fanout: Int
    var size: Int
    var metric: String
    var mode: String
    var summary: Summary?
    /// Events per second, for throughput.
    var rate: Double?
    /// Throughput: each round's rate, in the order of the rounds (`rate` is their median).
    var rates: [Double]? = nil
    /// Events published but never seen (closed loop: not acked within 2 s; throughput: dropped).
    var lost: Int = 0
    /// Events handled more than once (the guaranteed tier's consumer kill).
    var duplicated: Int = 0
    /// CPU per event (µs, all threads) of the broker or relay, and of all subscribers together.
    var brokerCPU: Double?
    var subscriberCPU: Double?
    /// Throughput: CPU per event (µs) of the publishing process.
    var publisherCPU: Double? = nil

    /// The guaranteed tier's row of a consumer killed and restarted mid-stream: lost and duplicated.
    static let consumerKill = "consumer kill -9"

    /// The raw-libzmq system this Lifeline figure is compared with (JetStream, for every other system
    /// of the guaranteed tier).
    var baselineSystem: String? {
        if scenario == "guaranteed" {
            if system.hasPrefix("jetstream") { return nil }
            // The replicated tier is compared with JetStream's replicated stream.
            return system == "lifeline group" ? "jetstream R3" : "jetstream"
        }
        guard system.hasPrefix("lifeline") else { return nil }
        // A group is compared with the single broker: the replication round trip is its price.
        if system.hasPrefix("lifeline group") { return "lifeline" + system.dropFirst("lifeline group".count) }
        return ["lookup", "publish-ack"].contains(scenario) ? "zmq_direct" : "zmq_proxy"
    }

    func matches(_ other: Figure, system: String) -> Bool {
        other.system == system && other.scenario == scenario && other.transport == transport
            && other.fanout == fanout
            && other.size == size && other.metric == metric
    }
}
