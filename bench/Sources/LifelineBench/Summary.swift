import Foundation

/// Percentiles of latency samples (nanoseconds in, microseconds out), nearest-rank.
struct Summary: Sendable {
    let count: Int
    let p50: Double
    let p90: Double
    let p99: Double
    let p999: Double
    let max: Double
    let mean: Double
    /// The distribution for plotting: (fraction at or below, microseconds), dense where the tail is,
    /// evenly spaced in "nines" (-log10(1 - fraction)) up to the last sample.
    let curve: [(fraction: Double, value: Double)]

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
        let nines = log10(Double(sorted.count))
        var points: [(fraction: Double, value: Double)] = []
        var lastIndex = -1
        for step in 0...600 {
            let fraction = 1 - pow(10, -nines * Double(step) / 600)
            let index = Swift.min(sorted.count - 1, Int((fraction * Double(sorted.count)).rounded(.down)))
            guard index != lastIndex else { continue }
            lastIndex = index
            points.append((Double(index + 1) / Double(sorted.count), Double(sorted[index]) / 1000))
        }
        curve = points
    }
}
