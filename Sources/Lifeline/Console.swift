import Foundation
import Glibc
import LifelineProtocol
import LifelineSupport
import Synchronization

/// Line output that reaches pipes at once (tests and scripts wait for lines).
package enum Console {
    /// Writes `line` and a newline to standard output, unbuffered (one `write` for lines up to 4 KiB,
    /// so concurrent lines do not interleave).
    package static func out(_ line: String) { write(line + "\n", to: 1) }

    /// Writes `line` and a newline to standard error, unbuffered.
    package static func error(_ line: String) { write(line + "\n", to: 2) }

    private static func write(_ text: String, to descriptor: Int32) {
        var text = text
        text.withUTF8 { bytes in
            var offset = 0
            while offset < bytes.count {
                let written = Glibc.write(descriptor, bytes.baseAddress! + offset, bytes.count - offset)
                if written < 0 && errno == EINTR { continue }
                if written <= 0 { return }
                offset += written
            }
        }
    }

    /// How much to log, lowest first; lines below the configured level are dropped.
    package enum Level: Int, Sendable, Comparable, CaseIterable {
        case trace, debug, info, notice, warning, error

        package var name: String { String(describing: self) }

        package init?(name: String) {
            guard let level = Self.allCases.first(where: { $0.name == name.lowercased() }) else { return nil }
            self = level
        }

        package static func < (left: Level, right: Level) -> Bool { left.rawValue < right.rawValue }
    }

    /// How log lines are written: `text` (one line per entry) or `json` (one object per line).
    package enum Format: String, Sendable, CaseIterable { case text, json }

    private static let settings = Mutex<(level: Level, format: Format)>(
        (
            ProcessInfo.processInfo.environment["LIFELINE_LOG_LEVEL"].flatMap(Level.init(name:)) ?? .info,
            ProcessInfo.processInfo.environment["LIFELINE_LOG_FORMAT"].flatMap(Format.init(rawValue:))
                ?? .text
        ))
    private static let process = ProcessInfo.processInfo.processName
    private static let pid = ProcessInfo.processInfo.processIdentifier

    /// Sets the level and format (`--log-level`, `--log-format`; by default `LIFELINE_LOG_LEVEL`
    /// and `LIFELINE_LOG_FORMAT`, else info and text). Child processes inherit them through the
    /// environment.
    package static func configure(level: Level? = nil, format: Format? = nil) {
        settings.withLock { settings in
            if let level { settings.level = level }
            if let format { settings.format = format }
        }
        if let level { setenv("LIFELINE_LOG_LEVEL", level.name, 1) }
        if let format { setenv("LIFELINE_LOG_FORMAT", format.rawValue, 1) }
    }

    /// Writes a log line to standard error: `2026-11-30T07:00:00.123Z info lifeline-push[42] push:
    /// message` (or the same fields as a JSON object). Control characters are escaped: a log line
    /// is always one line.
    package static func log(_ source: String, _ message: String, level: Level = .info) {
        let (threshold, format) = settings.withLock { ($0.level, $0.format) }
        guard level >= threshold else { return }
        switch format {
        case .text:
            error(
                "\(timestamp()) \(level.name) \(process)[\(pid)] \(source.escapedForLog): \(message.escapedForLog)"
            )
        case .json:
            let entry: JSONValue = [
                "ts": .string(timestamp()), "level": .string(level.name), "process": .string(process),
                "pid": .int(Int64(pid)), "service": .string(source), "message": .string(message),
            ]
            error(entry.description)
        }
    }

    /// Reads `--log-level LEVEL` and `--log-format text|json` out of `arguments` and applies them.
    package static func configure(parsing arguments: inout CommandLineArguments) throws(UsageError) {
        var level: Level?
        var format: Format?
        if let text = try arguments.option(logLevelOption) {
            guard let parsed = Level(name: text) else {
                throw UsageError(
                    "--log-level must be one of \(Level.allCases.map(\.name).joined(separator: ", ")), not '\(text.escapedForLog)'"
                )
            }
            level = parsed
        }
        if let text = try arguments.option(logFormatOption) {
            guard let parsed = Format(rawValue: text) else {
                throw UsageError("--log-format must be text or json, not '\(text.escapedForLog)'")
            }
            format = parsed
        }
        configure(level: level, format: format)
    }

    /// The usage lines of the logging options.
    package static var usage: String { CommandLineOption.helpText(options) }

    /// `--log-level LEVEL`.
    package static let logLevelOption = CommandLineOption.value(
        "--log-level", "LEVEL",
        help: "trace, debug, info (default), notice, warning or error ($LIFELINE_LOG_LEVEL)")

    /// `--log-format FORMAT`.
    package static let logFormatOption = CommandLineOption.value(
        "--log-format", "FORMAT", help: "text (default) or json, one object per line ($LIFELINE_LOG_FORMAT)")

    /// The logging options, read by ``configure(parsing:)``.
    package static let options = [logLevelOption, logFormatOption]

    /// The level of a broker log line, by what it reports: refusals, drops and expiries are
    /// warnings, failures errors, the rest info.
    package static func level(of line: String) -> Level {
        let lowered = line.lowercased()
        if lowered.contains("failed") || lowered.hasPrefix("could not") || lowered.contains("cannot") {
            return .error
        }
        for word in [
            "refused", "denied", "dropped", "expired", "crashed", "ignored", "gave up", "timed out",
            "not answered",
        ]
        where lowered.contains(word) {
            return .warning
        }
        return .info
    }

    /// Wall-clock time as ISO 8601 with milliseconds, UTC.
    package static func timestamp(wallNanoseconds: UInt64 = SystemClock.wallNanoseconds()) -> String {
        var seconds = time_t(wallNanoseconds / 1_000_000_000)
        var parts = tm()
        gmtime_r(&seconds, &parts)
        let milliseconds = Int(wallNanoseconds / 1_000_000 % 1000)
        return String(
            format: "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", Int(parts.tm_year) + 1900, Int(parts.tm_mon) + 1,
            Int(parts.tm_mday),
            Int(parts.tm_hour), Int(parts.tm_min), Int(parts.tm_sec), milliseconds)
    }
}
