import Lifeline
import LifelineProtocol

/// Benchmark payloads of an exact size.
enum Payload {
    /// A JSON object `{"k":K,"p":"xxx…"}` of exactly `size` bytes (at least 32); `quiet` adds `"q":1`
    /// (the subscriber counts the event but does not ack it).
    static func json(key: UInt64, size: Int, quiet: Bool = false) -> [UInt8] {
        let head = Array("{\"k\":\(key),\(quiet ? "\"q\":1," : "")\"p\":\"".utf8)
        let padding = max(0, size - head.count - 2)
        return head + [UInt8](repeating: UInt8(ascii: "x"), count: padding) + Array("\"}".utf8)
    }

    /// `size` bytes starting with `key` as a big-endian u64, then a quiet flag byte.
    static func binary(key: UInt64, size: Int, quiet: Bool = false) -> [UInt8] {
        var bytes = [UInt8](repeating: 0x78, count: max(9, size))
        for index in 0..<8 { bytes[index] = UInt8(truncatingIfNeeded: key >> UInt64(56 - 8 * index)) }
        bytes[8] = quiet ? 1 : 0
        return bytes
    }

    static func isQuiet(_ bytes: [UInt8]) -> Bool { bytes.count > 8 && bytes[8] == 1 }

    static func key(inBinary bytes: [UInt8]) -> UInt64 {
        guard bytes.count >= 8 else { return 0 }
        return bytes[0..<8].reduce(0) { $0 << 8 | UInt64($1) }
    }
}
