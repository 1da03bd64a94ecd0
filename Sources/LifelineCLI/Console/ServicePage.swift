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
        for (key, counts) in values { series[key] = .array(counts.map { .int(Int64($0)) }) }
        return [
            "name": .string(name), "record": details["record"] ?? .null, "stats": details["stats"] ?? .null,
            "history": [
                "range": .string(range), "step": .int(perMinute ? 60 : 1),
                "points": .int(Int64(perMinute ? CounterHistory.minutes : CounterHistory.seconds)),
                // The time of the last point's start, milliseconds since 1970.
                "end": .int(end * (perMinute ? 60_000 : 1000)), "series": .object(series),
            ],
        ]
    }
}
