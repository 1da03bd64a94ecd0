import LifelineProtocol

/// The console's services view: every registered service with its calls by method, marked
/// `silent` once it has missed two heartbeats, and the ones that left lately marked `gone` for
/// ``ServicesView/goneKept`` milliseconds before they leave the view.
struct ServicesView {
    static let goneKept: Int64 = 30_000

    private var last: [String: JSONValue] = [:]
    private var gone: [String: (row: JSONValue, since: Int64)] = [:]

    /// The view for a LIST reply's records and a STATS reply (nil when the key may not read it), at
    /// `now` (milliseconds).
    mutating func view(records: [JSONValue], stats: JSONValue?, now: Int64) -> JSONValue {
        var rows: [String: JSONValue] = [:]
        for record in records {
            guard let name = record["name"]?.stringValue else { continue }
            let interval = record["heartbeat"]?["intervalMs"]?.intValue ?? 1000
            let age = record["lastHeartbeatMsAgo"]?.intValue ?? 0
            let service = stats?["services"]?[name]
            // A replicable name's processes, each with its calls in flight; one process otherwise.
            let instances =
                record["instances"]?.arrayValue?.map { instance -> JSONValue in
                    [
                        "pid": instance["pid"] ?? .null, "host": instance["host"] ?? .null,
                        "inFlight": instance["inFlight"] ?? .int(0),
                        "connected": instance["connected"] ?? true,
                    ]
                } ?? [["pid": record["pid"] ?? .null, "host": record["host"] ?? .null]]
            rows[name] = [
                "instances": .array(instances),
                "name": .string(name), "pid": record["pid"] ?? .null, "host": record["host"] ?? .null,
                "events": record["events"] ?? .array([]), "methods": record["methods"] ?? .array([]),
                "uptimeMs": record["uptimeMs"] ?? .null, "heartbeatAgeMs": .int(age),
                "dropped": record["dropped"] ?? .int(0),
                "state": .string(age > 2 * interval ? "silent" : "up"),
                "calls": service?["methods"] ?? .emptyObject,
                "handled": .int(
                    (service?["handled"]?.objectValue ?? [:]).values.compactMap(\.intValue).reduce(0, +)),
                "queued": service?["queued"] ?? .null,
            ]
            gone[name] = nil
        }
        for (name, row) in last where rows[name] == nil && gone[name] == nil {
            gone[name] = (row, now)
        }
        gone = gone.filter { now - $0.value.since < Self.goneKept }
        for (name, entry) in gone {
            guard case .object(var members) = entry.row else { continue }
            members["state"] = "gone"
            members["goneForMs"] = .int(now - entry.since)
            rows[name] = .object(members)
        }
        last = rows.filter { $0.value["state"] != "gone" }
        return .array(rows.keys.sorted().compactMap { rows[$0] })
    }
}
