import Foundation
import Lifeline
import LifelineProtocol
import ZeroMQ

/// Turns the figures into the table on stdout, `results.json` and the SVG pictures.
struct Report {
    let figures: [Figure]
    let settings: Settings
    let elapsed: Double

    func baseline(of figure: Figure) -> Figure? {
        guard let system = figure.baselineSystem else { return nil }
        return figures.first { figure.matches($0, system: system) }
    }

    /// The same measurement of NATS, for a Lifeline figure (nil when NATS was not measured).
    func nats(of figure: Figure) -> Figure? {
        guard figure.system.hasPrefix("lifeline") else { return nil }
        return figures.first { figure.matches($0, system: "nats") }
    }

    /// Lifeline's p50 (or rate) over NATS's.
    func natsRatio(of figure: Figure) -> Double? {
        guard let peer = nats(of: figure) else { return nil }
        if let mine = figure.summary, let theirs = peer.summary, theirs.p50 > 0 {
            return mine.p50 / theirs.p50
        }
        return Self.rateRatio(figure, peer)
    }

    /// One rate over another's. Rounds taken in turns are compared round by round: the median of
    /// the rounds' ratios.
    static func rateRatio(_ figure: Figure, _ other: Figure) -> Double? {
        if let mine = figure.rates, let theirs = other.rates, mine.count == theirs.count, !mine.isEmpty,
            !theirs.contains(0)
        {
            return Driver.median(zip(mine, theirs).map { $0 / $1 })
        }
        if let mine = figure.rate, let theirs = other.rate, theirs > 0 { return mine / theirs }
        return nil
    }

    /// CPU per event: whole microseconds, tenths below ten.
    private static func cpu(_ value: Double) -> String {
        String(format: value < 10 ? "%.1f" : "%.0f", value)
    }

    private static func number(_ value: Double) -> String {
        value >= 1000 ? String(format: "%.0f", value) : String(format: "%.1f", value)
    }

    var table: String {
        var rows: [[String]] = []
        for figure in figures {
            var row = [
                figure.scenario, figure.transport, String(figure.fanout), String(figure.size), figure.metric,
                figure.system,
            ]
            if let summary = figure.summary {
                row +=
                    [String(summary.count)]
                    + [summary.p50, summary.p90, summary.p99, summary.p999, summary.max].map(Self.number)
            } else {
                row += ["-", figure.rate.map { String(format: "%.0f/s", $0) } ?? "-", "", "", "", ""]
            }
            var comparison = ""
            if let base = baseline(of: figure) {
                if let mine = figure.summary, let theirs = base.summary {
                    comparison = String(
                        format: "%.2fx / %.2fx %@", mine.p50 / theirs.p50, mine.p99 / theirs.p99, base.system)
                } else if let ratio = Self.rateRatio(figure, base) {
                    comparison = String(format: "%.2fx %@", ratio, base.system)
                }
            }
            row.append(comparison)
            row.append(natsRatio(of: figure).map { String(format: "%.2fx", $0) } ?? "")
            row.append(
                figure.subscriberCPU.map {
                    "\(figure.brokerCPU.map { Self.cpu($0) } ?? "-") / \(Self.cpu($0))"
                } ?? "")
            var notes: [String] = []
            if figure.summary != nil, let rate = figure.rate {
                notes.append(String(format: "%.0f/s delivered to each", rate))
            }
            if let cpu = figure.publisherCPU { notes.append("publisher \(Self.cpu(cpu)) µs/event") }
            if let rates = figure.rates, rates.count > 1, let low = rates.min(), let high = rates.max() {
                notes.append(String(format: "%d rounds %.0f–%.0f/s", rates.count, low, high))
            }
            if figure.lost > 0 || figure.scenario == "guaranteed" && figure.metric == Figure.consumerKill {
                notes.append("\(figure.lost) lost")
            }
            if figure.metric == Figure.consumerKill { notes.append("\(figure.duplicated) handled twice") }
            row.append(notes.joined(separator: ", "))
            rows.append(row)
        }
        let header = [
            "scenario", "tr", "N", "bytes", "metric", "system", "n", "p50", "p90", "p99", "p99.9", "max",
            "p50 / p99 vs", "vs nats", "cpu µs/event brk/subs", "",
        ]
        let all = [header] + rows
        let widths = header.indices.map { column in all.map { $0[column].count }.max() ?? 0 }
        let numeric = Set([2, 3, 6, 7, 8, 9, 10, 11])
        return all.map { row in
            row.enumerated().map { index, cell in
                numeric.contains(index)
                    ? String(repeating: " ", count: widths[index] - cell.count) + cell
                    : cell.padding(toLength: widths[index], withPad: " ", startingAt: 0)
            }.joined(separator: "  ")
        }.joined(separator: "\n")
    }

    static func machine() -> JSONValue {
        let cpuinfo = (try? String(contentsOfFile: "/proc/cpuinfo", encoding: .utf8)) ?? ""
        let model =
            cpuinfo.split(separator: "\n").first { $0.hasPrefix("model name") }?.split(separator: ":").last?
            .trimmingCharacters(in: .whitespaces) ?? "unknown"
        let kernel =
            (try? String(contentsOfFile: "/proc/sys/kernel/osrelease", encoding: .utf8))?.trimmingCharacters(
                in: .whitespacesAndNewlines) ?? ""
        return [
            "cpu": .string(model), "cores": .int(Int64(ProcessInfo.processInfo.activeProcessorCount)),
            "memoryGiB": .int(Int64(ProcessInfo.processInfo.physicalMemory >> 30)), "kernel": .string(kernel),
            "libzmq": .string(ZMQContext.libraryVersion),
            "swift": .string(ProcessInfo.processInfo.environment["BENCH_SWIFT_VERSION"] ?? "unknown"),
        ]
    }

    var json: JSONValue {
        let list: [JSONValue] = figures.map { figure in
            var members: [String: JSONValue] = [
                "scenario": .string(figure.scenario), "system": .string(figure.system),
                "transport": .string(figure.transport),
                "fanout": .int(Int64(figure.fanout)), "bytes": .int(Int64(figure.size)),
                "metric": .string(figure.metric),
                "mode": .string(figure.mode), "lost": .int(Int64(figure.lost)),
            ]
            if figure.metric == Figure.consumerKill { members["duplicated"] = .int(Int64(figure.duplicated)) }
            if let summary = figure.summary {
                members["samples"] = .int(Int64(summary.count))
                members["unit"] = "µs"
                for (name, value) in [
                    ("p50", summary.p50), ("p90", summary.p90), ("p99", summary.p99), ("p99.9", summary.p999),
                    ("max", summary.max), ("mean", summary.mean),
                ] {
                    members[name] = .double((value * 10).rounded() / 10)
                }
            }
            if let rate = figure.rate { members["eventsPerSecond"] = .double(rate.rounded()) }
            if let rates = figure.rates {
                members["eventsPerSecondByRound"] = .array(rates.map { .double($0.rounded()) })
            }
            if let cpu = figure.brokerCPU {
                members["brokerCpuMicrosecondsPerEvent"] = .double(
                    cpu < 10 ? (cpu * 100).rounded() / 100 : cpu.rounded())
            }
            if let cpu = figure.subscriberCPU {
                members["subscribersCpuMicrosecondsPerEvent"] = .double(
                    cpu < 10 ? (cpu * 100).rounded() / 100 : cpu.rounded())
            }
            if let cpu = figure.publisherCPU {
                members["publisherCpuMicrosecondsPerEvent"] = .double((cpu * 100).rounded() / 100)
            }
            if let ratio = natsRatio(of: figure) {
                members["ratioToNats"] = .double((ratio * 100).rounded() / 100)
            }
            if let base = baseline(of: figure) {
                members["baseline"] = .string(base.system)
                if let mine = figure.summary, let theirs = base.summary {
                    members["ratioP50"] = .double((mine.p50 / theirs.p50 * 100).rounded() / 100)
                    members["ratioP99"] = .double((mine.p99 / theirs.p99 * 100).rounded() / 100)
                }
                if let ratio = Self.rateRatio(figure, base) {
                    members["ratioRate"] = .double((ratio * 100).rounded() / 100)
                }
            }
            return .object(members)
        }
        return [
            "date": .string(Console.timestamp()), "machine": Self.machine(),
            "elapsedSeconds": .double(elapsed.rounded()),
            "settings": [
                "quick": .bool(settings.quick), "samplesPerSystem": .int(Int64(settings.samples)),
                "warmup": .int(Int64(settings.warmup)),
                "interleavedRounds": .int(Int64(settings.rounds)),
                "fanouts": .array(settings.fanouts.map { .int(Int64($0)) }),
                "bytes": .array(settings.sizes.map { .int(Int64($0)) }),
                "transports": .array(settings.transports.map { .string($0) }),
                "throughputEvents": .int(Int64(settings.throughputEvents)),
                "throughputRounds": .int(Int64(settings.throughputRounds)),
                "pacedRate": .int(Int64(settings.pacedRate)),
                "clock": "CLOCK_MONOTONIC, shared by all processes of the host",
            ],
            "figures": .array(list),
        ]
    }

    private static let colors = [
        "lifeline": SVGChart.palette[0], "zmq_proxy": SVGChart.palette[1], "zmq_direct": SVGChart.palette[2],
        "nats": SVGChart.palette[3], "redis": SVGChart.palette[4], "jetstream": SVGChart.palette[3],
        "redis streams": SVGChart.palette[4], "lifeline group": SVGChart.palette[1],
        "jetstream R3": SVGChart.palette[2],
    ]

    /// The pictures: CDFs (log scale) and latency against fan-out.
    var charts: [(String, String)] {
        var charts: [(String, String)] = []
        for transport in settings.transports {
            for (scenario, metric, fanout, title) in [
                ("broadcast", "one-way", 1, "Broadcast dispatch, 1 subscriber, 64 B"),
                ("call", "rtt", 1, "Call round trip through the broker, 64 B"),
                ("paced", "one-way from intended", 1, "Paced broadcast, 1 subscriber, 64 B"),
                (
                    "guaranteed", "publish-ack", 1,
                    "Guaranteed tier: publish to a persisted acknowledgement, 64 B"
                ),
            ] {
                let lines = figures.filter {
                    $0.scenario == scenario && $0.transport == transport && $0.metric == metric
                        && $0.fanout == fanout && $0.size == 64
                }
                guard !lines.isEmpty else { continue }
                let values = lines.flatMap { $0.summary?.curve.map(\.value) ?? [] }
                guard let low = values.min(), let high = values.max() else { continue }
                let range = pow(10, floor(log10(low)))...pow(10, ceil(log10(high)))
                let nines = ceil(log10(Double(lines.compactMap(\.summary?.count).max() ?? 10)))
                let ticks = [
                    (0.0, "0"), (0.5, "p50"), (0.9, "p90"), (0.99, "p99"), (0.999, "p99.9"),
                    (0.9999, "p99.99"), (0.99999, "p99.999"),
                ].filter { -log10(1 - $0.0) <= nines + 1e-9 }
                // The guaranteed tier is compared with JetStream, the others with NATS core.
                let reference = scenario == "guaranteed" ? "jetstream" : "nats"
                let nats = lines.first { $0.system == reference }?.summary?.p50
                let series = lines.compactMap { figure -> SVGChart.Series? in
                    guard let summary = figure.summary else { return nil }
                    let points = summary.curve.map { (x: $0.value, y: $0.fraction) }
                    let ratio =
                        nats.map {
                            figure.system == reference || $0 <= 0
                                ? "" : String(format: " (%.2f× \(reference))", summary.p50 / $0)
                        }
                        ?? ""
                    return SVGChart.Series(
                        name: "\(figure.system) p50 \(String(format: "%.0f", summary.p50)) µs\(ratio)",
                        color: Self.colors[figure.system] ?? "#333", points: points)
                }
                let chart = SVGChart(
                    title: "\(title) — \(transport)",
                    subtitle:
                        "CDF of \(lines[0].summary?.count ?? 0) samples per system, \(lines[0].mode); Lifeline vs \(scenario == "guaranteed" ? "JetStream, Redis Streams" : "raw libzmq, NATS, Redis")",
                    xLabel: "latency (µs, log scale)", yLabel: "percentile (tail spread out)",
                    xScale: .log(range), yScale: .nines(nines),
                    xTicks: SVGChart.logTicks(range), yTicks: Array(ticks.map(\.0)),
                    yTickLabels: ticks.map(\.1), series: series)
                charts.append(("cdf-\(scenario)-\(transport).svg", chart.document))
            }
            let fanouts = figures.filter {
                $0.scenario == "broadcast" && $0.transport == transport && $0.size == 64
                    && ($0.metric == "last-subscriber" || $0.metric == "one-way")
            }
            guard !fanouts.isEmpty else { continue }
            var series: [SVGChart.Series] = []
            for system in ["lifeline", "zmq_proxy", "zmq_direct", "nats", "redis"] {
                let points = fanouts.filter { $0.system == system }.sorted { $0.fanout < $1.fanout }
                for (label, dashed, value) in [
                    ("p50", false, { (s: Summary) in s.p50 }), ("p99", true, { (s: Summary) in s.p99 }),
                ] {
                    series.append(
                        SVGChart.Series(
                            name: "\(system) \(label)", color: Self.colors[system] ?? "#333",
                            points: points.compactMap { figure in
                                figure.summary.map { (x: Double(figure.fanout), y: value($0)) }
                            }, dashed: dashed))
                }
            }
            let high = series.flatMap { $0.points.map(\.y) }.max() ?? 1000
            let top = pow(10, ceil(log10(high)))
            // Lifeline's p50 over NATS's at each N, in the subtitle.
            let ratios = settings.fanouts.compactMap { fanout -> String? in
                let p50 = { (system: String) in
                    fanouts.first { $0.system == system && $0.fanout == fanout }?.summary?.p50
                }
                guard let lifeline = p50("lifeline"), let nats = p50("nats"), nats > 0 else { return nil }
                return String(format: "N=%d %.2f×", fanout, lifeline / nats)
            }
            let chart = SVGChart(
                title: "Broadcast to N subscribers, last subscriber — \(transport)",
                subtitle: "64 B events, closed loop; solid p50, dashed p99"
                    + (ratios.isEmpty ? "" : "; lifeline p50 / nats: " + ratios.joined(separator: ", ")),
                xLabel: "subscriber processes N (log scale)",
                yLabel: "latency until the last subscriber's handler (µs, log)",
                xScale: .log(1...16), yScale: .log(10...top), xTicks: settings.fanouts.map(Double.init),
                yTicks: SVGChart.logTicks(10...top), series: series)
            charts.append(("fanout-\(transport).svg", chart.document))
        }
        return charts
    }

    func write(to directory: URL) throws {
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        try Data(JSONWriter.encode(json)).write(
            to: directory.appendingPathComponent(settings.quick ? "results-quick.json" : "results.json"))
        try table.write(
            to: directory.appendingPathComponent(settings.quick ? "table-quick.txt" : "table.txt"),
            atomically: true, encoding: .utf8)
        // A quick run writes its own files, so the committed charts keep matching table.txt.
        for (name, document) in charts {
            let file = settings.quick ? name.replacingOccurrences(of: ".svg", with: "-quick.svg") : name
            try document.write(to: directory.appendingPathComponent(file), atomically: true, encoding: .utf8)
        }
    }
}
