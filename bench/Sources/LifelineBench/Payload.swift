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

    /// The key and the quiet flag of a payload made by ``json(key:size:quiet:)``, read as the Lifeline
    /// services' handlers read them (`event["k"]`, `event["q"]`, with the same reader): every
    /// subscriber of every system does this same work per event.
    static func fields(_ bytes: [UInt8]) -> (key: UInt64, quiet: Bool) {
        func member(_ name: String) -> JSONValue? {
            switch JSONFieldReader.value(of: name, in: bytes) {
            case .none: return nil
            case .some(let value?): return value
            case .some(nil): return (try? JSONParser.parse(bytes))?[name]
            }
        }
        return (UInt64(member("k")?.intValue ?? 0), member("q") != nil)
    }
}
