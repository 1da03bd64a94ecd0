import LifelineProtocol
import LifelineSupport

/// What `GET /api/service?name=NAME&range=5m|1h` answers: one service's page — its LIST record
/// (instances, events, methods, boot tasks, description), its STATS entry (per method requests,
/// errors, timeouts, p50/p99; handled, queued, dropped, undecodable) and its counts over time.
enum ServicePage {
    /// The ranges a page may show: per second over five minutes, per minute over an hour.
    static let ranges = ["5m", "1h"]

    /// The page of service `name` over `range`, from what `state` holds at `now` (milliseconds).
    /// - Throws: ``HTTPError`` 400 for an unknown range, 404 for a service not registered.
    static func view(name: String?, range: String?, state: ConsoleState, now: Int64) throws(HTTPError)
        -> JSONValue
    {
        guard let name, !name.isEmpty else { throw HTTPError(400, "which service? /api/service?name=NAME") }
        let range = range ?? "5m"
        guard ranges.contains(range) else {
            throw HTTPError(400, "range must be 5m or 1h, not '\(range)'")
        }
        guard let details = state.details(of: name) else {
            throw HTTPError(404, "no service named '\(name)' is registered")
        }
        let perMinute = range == "1h"
        let (end, values) = state.serviceHistory(name, perMinute: perMinute, now: now)
        var series: [String: JSONValue] = [:]
        var buckets: [String: [Int: [Int]]] = [:]
        for (key, counts) in values {
            let parts = key.split(separator: "\t", omittingEmptySubsequences: false).map(String.init)
            if parts.count == 3, parts[0] == "bucket", let index = Int(parts[2]) {
                buckets[parts[1], default: [:]][index] = counts
            } else {
                series[key] = .array(counts.map { .int(Int64($0)) })
            }
        }
        let latency = Self.latency(buckets, bounds: state.latencyBounds)
        return [
            "name": .string(name), "record": details["record"] ?? .null, "stats": details["stats"] ?? .null,
            "history": [
                "range": .string(range), "step": .int(perMinute ? 60 : 1),
                "points": .int(Int64(perMinute ? CounterHistory.minutes : CounterHistory.seconds)),
                // The time of the last point's start, milliseconds since 1970.
                "end": .int(end * (perMinute ? 60_000 : 1000)), "series": .object(series),
                "latency": .object(latency),
            ],
        ]
    }

    /// Each method's p50 and p99 in each unit (`p50\tMETHOD`, `p99\tMETHOD`), in milliseconds, from
    /// the calls whose time fell in each latency bucket in that unit: the upper bound of the bucket
    /// holding the quantile (the last bound for the open bucket), null in a unit without calls.
    static func latency(_ buckets: [String: [Int: [Int]]], bounds: [Double]) -> [String: JSONValue] {
        var latency: [String: JSONValue] = [:]
        for (method, byIndex) in buckets {
            let points = byIndex.values.first?.count ?? 0
            var p50: [JSONValue] = []
            var p99: [JSONValue] = []
            for point in 0..<points {
                let counts = (0...bounds.count).map { byIndex[$0]?[point] ?? 0 }
                p50.append(quantile(0.5, counts, bounds))
                p99.append(quantile(0.99, counts, bounds))
            }
            latency["p50\t\(method)"] = .array(p50)
            latency["p99\t\(method)"] = .array(p99)
        }
        return latency
    }

    private static func quantile(_ q: Double, _ counts: [Int], _ bounds: [Double]) -> JSONValue {
        let total = counts.reduce(0, +)
        guard total > 0, let last = bounds.last else { return .null }
        let rank = max(1, Int((Double(total) * q).rounded(.up)))
        var seen = 0
        for (index, count) in counts.enumerated() {
            seen += count
            if seen >= rank { return .double(index < bounds.count ? bounds[index] : last) }
        }
        return .double(last)
    }
}
