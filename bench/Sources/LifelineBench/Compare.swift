import Foundation
import LifelineProtocol
import LifelineSupport

/// `lifeline-bench compare`: the figures of runs of two revisions (before, after), each row the median
/// over the runs, side by side: p50, the p50 as a ratio to the same run's raw libzmq row (which cancels
/// what the machine did between runs), and CPU per event; the ratio after/before of each.
enum Compare {
    struct Row: Hashable, Comparable {
        let scenario: String
        let metric: String
        let transport: String
        let fanout: Int
        let bytes: Int

        static func < (a: Row, b: Row) -> Bool {
            (a.scenario, a.metric, a.transport, a.fanout, a.bytes) < (
                b.scenario, b.metric, b.transport, b.fanout, b.bytes
            )
        }

        var label: String {
            "\(scenario) \(metric) \(transport) N=\(fanout) \(bytes) B"
        }
    }

    /// One run's numbers, by row and system.
    struct Run {
        var p50: [Row: [String: Double]] = [:]
        var ratio: [Row: [String: Double]] = [:]
        var cpu: [Row: [String: Double]] = [:]
    }

    static func load(_ directory: String) throws -> Run {
        let base = URL(fileURLWithPath: directory)
        let file = ["results-quick.json", "results.json"].map { base.appendingPathComponent($0) }
            .first { FileManager.default.fileExists(atPath: $0.path) }
        guard let file, let data = FileManager.default.contents(atPath: file.path) else {
            throw UsageError("no results.json or results-quick.json in \(directory)")
        }
        var run = Run()
        for figure in try JSONParser.parse(Array(data))["figures"]?.arrayValue ?? [] {
            guard let system = figure["system"]?.stringValue, let p50 = figure["p50"]?.doubleValue else {
                continue
            }
            let row = Row(
                scenario: figure["scenario"]?.stringValue ?? "", metric: figure["metric"]?.stringValue ?? "",
                transport: figure["transport"]?.stringValue ?? "",
                fanout: Int(figure["fanout"]?.intValue ?? 0),
                bytes: Int(figure["bytes"]?.intValue ?? 0))
            run.p50[row, default: [:]][system] = p50
            if let ratio = figure["ratioP50"]?.doubleValue { run.ratio[row, default: [:]][system] = ratio }
            if let cpu = figure["subscribersCpuMicrosecondsPerEvent"]?.doubleValue {
                run.cpu[row, default: [:]][system] = cpu
            }
        }
        return run
    }

    static func median(_ values: [Double]) -> Double? {
        guard !values.isEmpty else { return nil }
        let sorted = values.sorted()
        return sorted.count % 2 == 1
            ? sorted[sorted.count / 2] : (sorted[sorted.count / 2 - 1] + sorted[sorted.count / 2]) / 2
    }

    /// The median over `runs` of one value.
    static func median(
        _ runs: [Run], _ field: KeyPath<Run, [Row: [String: Double]]>, _ row: Row, _ system: String
    ) -> Double? {
        median(runs.compactMap { $0[keyPath: field][row]?[system] })
    }

    /// The comparison table: `systems` of the before runs against the same system after, and each
    /// system found only after (the default path) beside the after run's `lifeline` row.
    static func table(before: [Run], after: [Run]) -> String {
        func text(_ value: Double?, _ format: String) -> String {
            value.map { String(format: format, $0) } ?? "-"
        }
        func change(_ new: Double?, _ old: Double?) -> String {
            guard let new, let old, old > 0 else { return "-" }
            return String(format: "%+.1f%%", (new / old - 1) * 100)
        }
        let rows = Set(after.flatMap { $0.p50.keys }).intersection(before.flatMap { $0.p50.keys })
            .filter { ["one-way", "last-subscriber", "rtt"].contains($0.metric) }.sorted()
        func line(_ cells: [String]) -> String {
            let widths = [44, 34, 8, 8, 7, 7, 7, 7, 6, 6, 7]
            return zip(cells, widths).enumerated().map { index, pair in
                let (cell, width) = pair
                let padding = String(repeating: " ", count: max(0, width - cell.count))
                return index < 2 ? cell + padding : padding + cell
            }.joined(separator: " ")
        }
        var lines = [
            "each row: the median over the runs that measured it (\(before.count) result directories before, \(after.count) after, run alternately); p50 in µs; ×zmq: p50 over the same run's libzmq row; cpu: subscribers' µs per event",
            "",
            line([
                "row", "system", "p50 bef", "p50 aft", "change", "×zmq b", "×zmq a", "change", "cpu b",
                "cpu a",
                "change",
            ]),
        ]
        for row in rows {
            let systems = Set(after.flatMap { ($0.p50[row] ?? [:]).keys }).filter { $0.hasPrefix("lifeline") }
                .sorted()
            for system in systems {
                let reference = before.contains { $0.p50[row]?[system] != nil } ? system : "lifeline"
                let p50Before = median(before, \.p50, row, reference)
                let p50After = median(after, \.p50, row, system)
                let ratioBefore = median(before, \.ratio, row, reference)
                let ratioAfter = median(after, \.ratio, row, system)
                let cpuBefore = median(before, \.cpu, row, reference)
                let cpuAfter = median(after, \.cpu, row, system)
                let name = reference == system ? system : "\(system) (vs lifeline before)"
                lines.append(
                    line([
                        row.label, name, text(p50Before, "%.1f"), text(p50After, "%.1f"),
                        change(p50After, p50Before),
                        text(ratioBefore, "%.2f"), text(ratioAfter, "%.2f"), change(ratioAfter, ratioBefore),
                        text(cpuBefore, "%.0f"), text(cpuAfter, "%.0f"), change(cpuAfter, cpuBefore),
                    ]))
            }
        }
        return lines.joined(separator: "\n")
    }
}
