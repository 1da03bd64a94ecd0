import Foundation
import Lifeline
import LifelineProtocol

/// Draws a boot report as an SVG timeline: one row per task grouped by process, bars coloured by
/// phase, the critical chain outlined.
enum BootTimeline {
    static let palette = [
        "#4e79a7", "#f28e2b", "#59a14f", "#b07aa1", "#76b7b2", "#edc948", "#ff9da7", "#9c755f",
    ]

    static func escape(_ text: String) -> String {
        text.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;")
            .replacingOccurrences(of: ">", with: "&gt;")
    }

    static func svg(_ report: JSONValue) -> String {
        let tasks = report["tasks"]?.arrayValue ?? []
        if tasks.isEmpty && (report["boot"]?.intValue ?? 0) == 0 {
            return """
                <svg xmlns="http://www.w3.org/2000/svg" width="1000" height="60" font-family="Helvetica, Arial, sans-serif" font-size="13">
                <rect width="100%" height="100%" fill="white"/>
                <text x="20" y="35" fill="#555">No boot has run yet: lifeline boot start runs one.</text>
                </svg>

                """
        }
        let launchOptions = report["launchOptions"].flatMap {
            $0 == .null || $0 == .emptyObject ? nil : "; launch options \(escape($0.description))"
        }
        let phases = (report["phases"]?.arrayValue ?? []).compactMap(\.stringValue)
        let chain = Set((report["criticalChain"]?.arrayValue ?? []).compactMap(\.stringValue))
        let services = Array(Set(tasks.compactMap { $0["service"]?.stringValue })).sorted { a, b in
            let first = { (name: String) in
                tasks.filter { $0["service"]?.stringValue == name }.compactMap { $0["startMs"]?.intValue }
                    .min() ?? .max
            }
            return (first(a), a) < (first(b), b)
        }
        let ordered = services.flatMap { service in
            tasks.filter { $0["service"]?.stringValue == service }.sorted {
                ($0["startMs"]?.intValue ?? .max) < ($1["startMs"]?.intValue ?? .max)
            }
        }
        let end = max(
            1,
            tasks.compactMap { task in
                task["startMs"]?.intValue.map { $0 + (task["durationMs"]?.intValue ?? 0) }
            }.max() ?? 1)
        let (left, right, top, rowHeight) = (230.0, 170.0, 100.0, 24.0)
        let width = 1000.0
        let plot = width - left - right
        let height = top + Double(ordered.count) * rowHeight + 90
        func x(_ ms: Int64) -> Double { left + Double(ms) / Double(end) * plot }
        var svg = """
            <svg xmlns="http://www.w3.org/2000/svg" width="\(Int(width))" height="\(Int(height))" font-family="Helvetica, Arial, sans-serif" font-size="12">
            <rect width="100%" height="100%" fill="white"/>
            <text x="20" y="28" font-size="17" font-weight="bold">Boot #\(report["boot"]?.intValue ?? 0): \(escape(report["state"]?.stringValue ?? "")) in \(report["durationMs"]?.intValue ?? 0) ms</text>
            <text x="20" y="48" fill="#555">one row per task, grouped by process; colour = phase; thick red outline = critical chain\(launchOptions ?? "")</text>
            <text x="\(left + plot / 2)" y="\(top - 34)" text-anchor="middle" fill="#333">time since the boot started (ms)</text>

            """
        let step = max(
            1,
            Int64(pow(10, floor(log10(Double(end)))))
                / (end / Int64(pow(10, floor(log10(Double(end))))) > 4 ? 1 : 5))
        var tick: Int64 = 0
        while tick <= end {
            svg +=
                "<line x1=\"\(x(tick))\" y1=\"\(top - 6)\" x2=\"\(x(tick))\" y2=\"\(top + Double(ordered.count) * rowHeight)\" stroke=\"#eee\"/>"
            svg +=
                "<text x=\"\(x(tick))\" y=\"\(top - 10)\" text-anchor=\"middle\" fill=\"#666\">\(tick) ms</text>\n"
            tick += step
        }
        var lastService = ""
        for (row, task) in ordered.enumerated() {
            let y = top + Double(row) * rowHeight
            let service = task["service"]?.stringValue ?? ""
            if service != lastService {
                svg += "<line x1=\"10\" y1=\"\(y)\" x2=\"\(width - 10)\" y2=\"\(y)\" stroke=\"#ccc\"/>"
                svg += "<text x=\"12\" y=\"\(y + 16)\" font-weight=\"bold\">\(escape(service))</text>\n"
                lastService = service
            }
            let name = task["name"]?.stringValue ?? ""
            let state = task["state"]?.stringValue ?? ""
            svg +=
                "<text x=\"\(left - 8)\" y=\"\(y + 16)\" text-anchor=\"end\">\(escape(String(name.dropFirst(service.count + 1))))</text>"
            let colour = palette[
                (phases.firstIndex(of: task["phase"]?.stringValue ?? "") ?? 0) % palette.count]
            guard let start = task["startMs"]?.intValue else {
                // Never ran: say why where its bar would be.
                let why = task["reason"]?.stringValue.map { ": \($0)" } ?? ""
                svg +=
                    "<text x=\"\(left + 6)\" y=\"\(y + 16)\" fill=\"#888\" font-style=\"italic\">\(escape(state + why))</text>\n"
                continue
            }
            let duration = task["durationMs"]?.intValue ?? 0
            if duration == 0 {
                // A zero-length task is an instant: a diamond, not a bar.
                let (cx, cy) = (x(start), y + rowHeight / 2)
                let fill =
                    state == "skipped"
                    ? "#bbb"
                    : (state == "failed"
                        ? "#e15759"
                        : palette[
                            (phases.firstIndex(of: task["phase"]?.stringValue ?? "") ?? 0) % palette.count])
                svg +=
                    "<path d=\"M \(cx) \(cy - 7) L \(cx + 7) \(cy) L \(cx) \(cy + 7) L \(cx - 7) \(cy) Z\" fill=\"\(fill)\"\(chain.contains(name) ? " stroke=\"#c00\" stroke-width=\"2\"" : "")/>"
                let why = state == "skipped" ? (task["reason"]?.stringValue.map { ": \($0)" } ?? "") : ""
                svg +=
                    "<text x=\"\(cx + 12)\" y=\"\(y + 16)\" fill=\"#333\">\(escape(state == "done" ? "0 ms (instant)" : state + why))</text>\n"
                continue
            }
            let barWidth = max(2, x(start + duration) - x(start))
            let onChain = chain.contains(name)
            let fill = state == "skipped" ? "#ddd" : (state == "failed" ? "#e15759" : colour)
            svg +=
                "<rect x=\"\(x(start))\" y=\"\(y + 4)\" width=\"\(barWidth)\" height=\"\(rowHeight - 8)\" rx=\"3\" fill=\"\(fill)\"\(onChain ? " stroke=\"#c00\" stroke-width=\"3\"" : "")/>"
            let label =
                state == "done" ? "\(duration) ms" : "\(state)\(duration > 0 ? " \(duration) ms" : "")"
            svg +=
                "<text x=\"\(x(start) + barWidth + 6)\" y=\"\(y + 16)\" fill=\"#333\">\(escape(label))\(task["async"] == true ? " (async)" : "")</text>\n"
        }
        let legendY = top + Double(ordered.count) * rowHeight + 40
        for (index, phase) in phases.enumerated() {
            let lx = 20.0 + Double(index) * 130
            svg +=
                "<rect x=\"\(lx)\" y=\"\(legendY)\" width=\"14\" height=\"14\" fill=\"\(palette[index % palette.count])\"/><text x=\"\(lx + 20)\" y=\"\(legendY + 12)\">\(escape(phase))</text>\n"
        }
        svg +=
            "<rect x=\"20\" y=\"\(legendY + 24)\" width=\"14\" height=\"14\" fill=\"white\" stroke=\"#c00\" stroke-width=\"3\"/><text x=\"40\" y=\"\(legendY + 36)\">critical chain</text>\n"
        return svg + "</svg>\n"
    }
}
