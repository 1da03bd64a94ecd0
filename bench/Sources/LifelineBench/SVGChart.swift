import Foundation

/// A line chart written as a standalone SVG document (no plotting dependency).
struct SVGChart {
    struct Series {
        var name: String
        var color: String
        var points: [(x: Double, y: Double)]
        var dashed = false
    }

    enum Scale {
        case linear(ClosedRange<Double>)
        case log(ClosedRange<Double>)
        /// Fractions 0 … 1 - 10^-nines, spread by their "nines" (-log10(1 - fraction)) so the tail
        /// (p99, p99.9, p99.99) gets as much room as the body.
        case nines(Double)
    }

    var title: String
    var subtitle: String
    var xLabel: String
    var yLabel: String
    var xScale: Scale
    var yScale: Scale
    var xTicks: [Double]
    var yTicks: [Double]
    /// Labels for `yTicks` when numbers would not read well (percentiles); nil: the numbers.
    var yTickLabels: [String]?
    var series: [Series]

    static let palette = ["#d1495b", "#00798c", "#edae49", "#30638e", "#66a182"]

    private let width = 880.0
    private let height = 460.0
    private let left = 70.0
    private let right = 310.0
    private let top = 60.0
    private let bottom = 55.0

    init(
        title: String, subtitle: String, xLabel: String, yLabel: String, xScale: Scale, yScale: Scale,
        xTicks: [Double], yTicks: [Double], yTickLabels: [String]? = nil, series: [Series]
    ) {
        self.title = title
        self.subtitle = subtitle
        self.xLabel = xLabel
        self.yLabel = yLabel
        self.xScale = xScale
        self.yScale = yScale
        self.xTicks = xTicks
        self.yTicks = yTicks
        self.yTickLabels = yTickLabels
        self.series = series
    }

    private func position(_ value: Double, _ scale: Scale, from start: Double, length: Double) -> Double {
        switch scale {
        case .linear(let range):
            return start + (value - range.lowerBound) / (range.upperBound - range.lowerBound) * length
        case .log(let range):
            let clamped = max(value, range.lowerBound)
            return start + (log10(clamped) - log10(range.lowerBound))
                / (log10(range.upperBound) - log10(range.lowerBound)) * length
        case .nines(let top):
            let nines = -log10(Swift.max(1 - value, pow(10, -top)))
            return start + nines / top * length
        }
    }

    private func x(_ value: Double) -> Double {
        position(value, xScale, from: left, length: width - left - right)
    }
    private func y(_ value: Double) -> Double {
        height - bottom - (position(value, yScale, from: 0, length: height - top - bottom))
    }

    private static func label(_ value: Double) -> String {
        if value >= 1000 && value.truncatingRemainder(dividingBy: 1000) == 0 {
            return "\(Int(value / 1000))k"
        }
        if value == value.rounded() { return String(Int(value)) }
        return String(format: "%g", value)
    }

    private static func escape(_ text: String) -> String {
        text.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;")
            .replacingOccurrences(of: ">", with: "&gt;")
    }

    var document: String {
        var svg = """
            <svg xmlns="http://www.w3.org/2000/svg" width="\(Int(width))" height="\(Int(height))" viewBox="0 0 \(Int(width)) \(Int(height))" font-family="Helvetica, Arial, sans-serif">
            <rect width="100%" height="100%" fill="white"/>
            <text x="\(left)" y="26" font-size="17" font-weight="bold">\(Self.escape(title))</text>
            <text x="\(left)" y="45" font-size="12" fill="#555">\(Self.escape(subtitle))</text>

            """
        let plotRight = width - right
        for tick in xTicks {
            let position = x(tick)
            svg +=
                "<line x1=\"\(position)\" y1=\"\(top)\" x2=\"\(position)\" y2=\"\(height - bottom)\" stroke=\"#e5e5e5\"/>\n"
            svg +=
                "<text x=\"\(position)\" y=\"\(height - bottom + 18)\" font-size=\"11\" text-anchor=\"middle\">\(Self.label(tick))</text>\n"
        }
        for (index, tick) in yTicks.enumerated() {
            let position = y(tick)
            let text = yTickLabels?[index] ?? Self.label(tick)
            svg +=
                "<line x1=\"\(left)\" y1=\"\(position)\" x2=\"\(plotRight)\" y2=\"\(position)\" stroke=\"#e5e5e5\"/>\n"
            svg +=
                "<text x=\"\(left - 8)\" y=\"\(position + 4)\" font-size=\"11\" text-anchor=\"end\">\(Self.escape(text))</text>\n"
        }
        svg +=
            "<rect x=\"\(left)\" y=\"\(top)\" width=\"\(plotRight - left)\" height=\"\(height - top - bottom)\" fill=\"none\" stroke=\"#333\"/>\n"
        svg +=
            "<text x=\"\((left + plotRight) / 2)\" y=\"\(height - 14)\" font-size=\"12\" text-anchor=\"middle\">\(Self.escape(xLabel))</text>\n"
        svg +=
            "<text transform=\"translate(18 \((top + height - bottom) / 2)) rotate(-90)\" font-size=\"12\" text-anchor=\"middle\">\(Self.escape(yLabel))</text>\n"
        for (index, line) in series.enumerated() where !line.points.isEmpty {
            let path = line.points.map { String(format: "%.1f,%.1f", x($0.x), y($0.y)) }.joined(
                separator: " ")
            svg +=
                "<polyline fill=\"none\" stroke=\"\(line.color)\" stroke-width=\"2\"\(line.dashed ? " stroke-dasharray=\"6 4\"" : "") points=\"\(path)\"/>\n"
            if line.points.count <= 12 {
                for point in line.points {
                    svg += String(
                        format: "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"3\" fill=\"%@\"/>\n", x(point.x),
                        y(point.y), line.color)
                }
            }
            let legendY = top + 10 + Double(index) * 20
            svg +=
                "<line x1=\"\(plotRight + 14)\" y1=\"\(legendY)\" x2=\"\(plotRight + 40)\" y2=\"\(legendY)\" stroke=\"\(line.color)\" stroke-width=\"2\"\(line.dashed ? " stroke-dasharray=\"6 4\"" : "")/>\n"
            svg +=
                "<text x=\"\(plotRight + 46)\" y=\"\(legendY + 4)\" font-size=\"12\">\(Self.escape(line.name))</text>\n"
        }
        return svg + "</svg>\n"
    }

    /// Log-scale ticks 1, 2, 5, 10, 20, 50 … covering `range`.
    static func logTicks(_ range: ClosedRange<Double>) -> [Double] {
        var ticks: [Double] = []
        var decade = pow(10, floor(log10(range.lowerBound)))
        while decade <= range.upperBound {
            for step in [1.0, 2, 5]
            where decade * step >= range.lowerBound && decade * step <= range.upperBound {
                ticks.append(decade * step)
            }
            decade *= 10
        }
        return ticks
    }
}
