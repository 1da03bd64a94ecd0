/// Percentiles of latency samples (nanoseconds in, microseconds out), nearest-rank.
struct Summary: Sendable {
    let count: Int
    let p50: Double
    let p90: Double
    let p99: Double
    let p999: Double
    let max: Double
    let mean: Double
    /// The sorted samples in microseconds, thinned to at most 2000 points for plotting.
    let curve: [Double]

    init?(_ samples: [UInt64]) {
        guard !samples.isEmpty else { return nil }
        let sorted = samples.sorted()
        func rank(_ quantile: Double) -> Double {
            let index = Swift.max(
                0, Swift.min(sorted.count - 1, Int((quantile * Double(sorted.count)).rounded(.up)) - 1))
            return Double(sorted[index]) / 1000
        }
        count = sorted.count
        p50 = rank(0.5)
        p90 = rank(0.9)
        p99 = rank(0.99)
        p999 = rank(0.999)
        max = Double(sorted.last!) / 1000
        mean = Double(sorted.reduce(0, +)) / Double(sorted.count) / 1000
        let step = Swift.max(1, sorted.count / 2000)
        curve = stride(from: 0, to: sorted.count, by: step).map { Double(sorted[$0]) / 1000 } + [max]
    }
}
