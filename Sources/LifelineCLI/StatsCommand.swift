import Foundation
import Lifeline
import LifelineProtocol
import LifelineSupport

/// `lifeline stats [SERVICE]`.
enum StatsCommand: CLICommand {
    static let name = "stats"
    static let summary =
        "the broker's counters, and each service's calls by method (requests, errors, p50/p99)"
    static let usage = """
        usage: lifeline stats [SERVICE] [options]

        Prints the broker's counters (events published and delivered, acks, dispatches, requests,
        journal, services) and, per service (or only SERVICE), its calls by method: requests,
        errors, timeouts and latency (p50/p99, as the broker measures forward to answer), dispatch
        steps answered, events its handlers' queue dropped and payloads its typed handlers could not
        decode. --json prints the broker's report as it is ({"broker": …, "services": {NAME: …}}),
        with SERVICE only that service under "services". The same counters are served to
        Prometheus by 'lifeline broker --metrics HOST:PORT'.
        """
    static let options = ClientOptions.options(timeout: "the broker's counters (default 5s)")

    static func run(_ arguments: inout CommandLineArguments) throws -> Int32 {
        let options = try ClientOptions(&arguments)
        let only = arguments.positional()
        try arguments.finish()
        let report = try options.client().request(.stats, timeout: options.timeout).json()
        let services = report["services"]?.objectValue ?? [:]
        if let only, services[only] == nil {
            let known = services.keys.sorted()
            throw LifelineError(
                .notFound,
                "no service named '\(only)' has stats; services: \(known.isEmpty ? "none" : known.joined(separator: ", "))"
            )
        }
        if options.json {
            // One shape with or without SERVICE: the broker's report, its services narrowed to SERVICE.
            var shown = report
            if let only, case .object(var fields) = report {
                fields["services"] = [only: services[only] ?? .null]
                shown = .object(fields)
            }
            Console.out(String(decoding: JSONWriter.encode(shown), as: UTF8.self))
            return 0
        }
        func number(_ value: JSONValue?) -> String {
            guard let value else { return "-" }
            if let double = value.doubleValue, value.intValue == nil { return String(format: "%.2f", double) }
            return value.intValue.map(String.init) ?? "-"
        }
        if let only, let events = services[only]?["handled"]?.objectValue, !events.isEmpty {
            Console.out(
                "\(only) handled: "
                    + events.sorted { $0.key < $1.key }.map { "\($0.key) \(number($0.value))" }.joined(
                        separator: ", "))
        }
        if only == nil, let broker = report["broker"] {
            Console.out(
                "broker: up \(number(broker["uptimeMs"])) ms, \(number(broker["requests"])) requests, \(number(broker["published"])) events published, \(number(broker["delivered"])) delivered, \(number(broker["acks"])) acks, \(number(broker["dispatches"])) dispatches, journal \(number(broker["journal"]?["events"])) events / \(number(broker["journal"]?["bytes"])) bytes, \(number(broker["services"])) services"
            )
        }
        var rows = [
            [
                "SERVICE", "METHOD", "REQUESTS", "ERRORS", "TIMEOUTS", "P50 MS", "P99 MS", "STEPS", "HANDLED",
                "FAILED", "QUEUED", "DROPPED", "UNDECODABLE",
            ]
        ]
        func handled(_ service: JSONValue) -> String {
            String((service["handled"]?.objectValue ?? [:]).values.compactMap(\.intValue).reduce(0, +))
        }
        for name in services.keys.sorted() where only == nil || only == name {
            let service = services[name] ?? .null
            let methods = service["methods"]?.objectValue ?? [:]
            let shown = name + (service["registered"] == false ? " (gone)" : "")
            if methods.isEmpty {
                rows.append([
                    shown, "-", "0", "0", "0", "-", "-", number(service["dispatchSteps"]), handled(service),
                    number(service["failed"]), number(service["queued"]), number(service["dropped"]),
                    number(service["undecodable"]),
                ])
            }
            for method in methods.keys.sorted() {
                let calls = methods[method] ?? .null
                rows.append([
                    shown, method, number(calls["requests"]), number(calls["errors"]),
                    number(calls["timeouts"]),
                    number(calls["p50Ms"]), number(calls["p99Ms"]), number(service["dispatchSteps"]),
                    handled(service), number(service["failed"]),
                    number(service["queued"]), number(service["dropped"]), number(service["undecodable"]),
                ])
            }
        }
        let widths = rows[0].indices.map { column in rows.map { $0[column].count }.max() ?? 0 }
        for row in rows {
            Console.out(
                row.enumerated().map {
                    $0.element.padding(toLength: widths[$0.offset], withPad: " ", startingAt: 0)
                }
                .joined(separator: "  ").trimmingCharacters(in: .whitespaces))
        }
        return 0
    }
}
