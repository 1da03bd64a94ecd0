import Foundation
import Glibc
import LifelineSupport

/// Line output that reaches pipes at once (tests and scripts wait for lines).
public enum Console {
    /// Writes `line` and a newline to standard output, unbuffered (one `write` for lines up to 4 KiB,
    /// so concurrent lines do not interleave).
    public static func out(_ line: String) { write(line + "\n", to: 1) }

    /// Writes `line` and a newline to standard error, unbuffered.
    public static func error(_ line: String) { write(line + "\n", to: 2) }

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

    /// Writes a timestamped log line, `2026-11-30T07:00:00.123Z source: message`, to standard error.
    /// Control characters in `source` and `message` are escaped: a log line is always one line.
    public static func log(_ source: String, _ message: String) {
        error("\(timestamp()) \(source.escapedForLog): \(message.escapedForLog)")
    }

    /// Wall-clock time as ISO 8601 with milliseconds, UTC.
    public static func timestamp(wallNanoseconds: UInt64 = SystemClock.wallNanoseconds()) -> String {
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
