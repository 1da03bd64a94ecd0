/// Durations in fixed buckets (Prometheus's cumulative `le` buckets), from 50 µs to 10 s: constant
/// memory whatever the count, quantiles read off the bucket bounds.
package struct LatencyHistogram: Sendable, Equatable {
    /// Upper bounds, in seconds; a last, implicit bucket is +Inf.
    package static let bounds: [Double] = [
        0.00005, 0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5,
        5, 10,
    ]
    /// Observations per bucket (not cumulative); one more than ``bounds`` for +Inf.
    package private(set) var counts = [UInt64](repeating: 0, count: LatencyHistogram.bounds.count + 1)
    package private(set) var count: UInt64 = 0
    package private(set) var sumSeconds: Double = 0

    package init() {}

    package mutating func record(nanoseconds: UInt64) {
        let seconds = Double(nanoseconds) / 1e9
        let index = Self.bounds.firstIndex { seconds <= $0 } ?? Self.bounds.count
        counts[index] += 1
        count += 1
        sumSeconds += seconds
    }

    /// The upper bound of the bucket holding quantile `q` (0...1), in seconds; nil when empty.
    package func quantile(_ q: Double) -> Double? {
        guard count > 0 else { return nil }
        let rank = max(1, UInt64((Double(count) * q).rounded(.up)))
        var seen: UInt64 = 0
        for (index, bucket) in counts.enumerated() {
            seen += bucket
            if seen >= rank { return index < Self.bounds.count ? Self.bounds[index] : .infinity }
        }
        return .infinity
    }
}
