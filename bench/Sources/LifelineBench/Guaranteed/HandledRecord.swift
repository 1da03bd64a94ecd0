import Foundation
import Glibc

/// A durable consumer's record of what it handled: one line per event, written with one `write` to a
/// file opened `O_APPEND` — in the OS before the consumer acknowledges the event (or, for Lifeline,
/// before its handler returns), not synced. A line is written whole or not at all when the consumer
/// is killed, so the file says exactly what was handled, and how often.
final class HandledRecord {
    private let descriptor: Int32

    /// Opens (or creates) the record at `path` for appending.
    /// - Throws: ``BenchError`` naming the path and errno.
    init(path: String) throws {
        descriptor = open(path, O_WRONLY | O_APPEND | O_CREAT, 0o644)
        guard descriptor >= 0 else { throw BenchError("cannot open \(path): errno \(errno)") }
    }

    deinit { close(descriptor) }

    /// Appends `line` (which ends with a newline).
    func append(_ line: String) {
        var line = line
        line.withUTF8 { bytes in _ = Glibc.write(descriptor, bytes.baseAddress, bytes.count) }
    }

    /// The lines of the record at `path` (none when it does not exist).
    static func lines(at path: String) -> [Substring] {
        guard let text = try? String(contentsOfFile: path, encoding: .utf8) else { return [] }
        return text.split(separator: "\n")
    }

    /// How often each key was handled, by the record at `path`: a line's last field is its key.
    static func handledKeys(at path: String) -> [UInt64: Int] {
        var counts: [UInt64: Int] = [:]
        for line in lines(at: path) {
            guard let key = line.split(separator: " ").last.flatMap({ UInt64($0) }) else { continue }
            counts[key, default: 0] += 1
        }
        return counts
    }
}
