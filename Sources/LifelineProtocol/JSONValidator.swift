/// Checks that bytes are one JSON document without building it (for payloads the broker only relays).
public enum JSONValidator {
    /// The JSON type of the document in `bytes` (`object`, `array`, …), or the parse error.
    public static func topLevelType(of bytes: [UInt8]) throws(JSONParseError) -> String {
        try bytes.withUnsafeBufferPointer { (buffer) throws(JSONParseError) -> String in
            var scanner = Scanner(input: buffer)
            scanner.skipWhitespace()
            let type = try scanner.value(depth: 0)
            scanner.skipWhitespace()
            if scanner.position < buffer.count { throw scanner.fail("unexpected data after the document") }
            return type
        }
    }

    private struct Scanner {
        let input: UnsafeBufferPointer<UInt8>
        var position = 0

        func fail(_ reason: String) -> JSONParseError { JSONParseError(offset: position, reason: reason) }

        mutating func skipWhitespace() {
            while position < input.count, [0x20, 0x0A, 0x0D, 0x09].contains(input[position]) { position += 1 }
        }

        mutating func expect(_ byte: UInt8, _ what: String) throws(JSONParseError) {
            skipWhitespace()
            guard position < input.count, input[position] == byte else { throw fail("expected \(what)") }
            position += 1
        }

        mutating func value(depth: Int) throws(JSONParseError) -> String {
            guard depth < JSONParser.maximumDepth else { throw fail("nested deeper than \(JSONParser.maximumDepth) levels") }
            skipWhitespace()
            guard position < input.count else { throw fail("unexpected end of input") }
            switch input[position] {
            case UInt8(ascii: "{"):
                position += 1
                skipWhitespace()
                if position < input.count, input[position] == UInt8(ascii: "}") {
                    position += 1
                    return "object"
                }
                while true {
                    skipWhitespace()
                    guard position < input.count, input[position] == UInt8(ascii: "\"") else { throw fail("expected a string key") }
                    try string()
                    try expect(UInt8(ascii: ":"), "':'")
                    _ = try value(depth: depth + 1)
                    skipWhitespace()
                    guard position < input.count else { throw fail("unterminated object") }
                    let byte = input[position]
                    position += 1
                    if byte == UInt8(ascii: "}") { return "object" }
                    guard byte == UInt8(ascii: ",") else { throw fail("expected ',' or '}'") }
                }
            case UInt8(ascii: "["):
                position += 1
                skipWhitespace()
                if position < input.count, input[position] == UInt8(ascii: "]") {
                    position += 1
                    return "array"
                }
                while true {
                    _ = try value(depth: depth + 1)
                    skipWhitespace()
                    guard position < input.count else { throw fail("unterminated array") }
                    let byte = input[position]
                    position += 1
                    if byte == UInt8(ascii: "]") { return "array" }
                    guard byte == UInt8(ascii: ",") else { throw fail("expected ',' or ']'") }
                }
            case UInt8(ascii: "\""):
                try string()
                return "string"
            default:
                // Scalars are rare in relayed payloads: let the full parser judge them.
                let start = position
                while position < input.count, ![UInt8(ascii: ","), UInt8(ascii: "]"), UInt8(ascii: "}"), 0x20, 0x0A, 0x0D, 0x09].contains(input[position]) {
                    position += 1
                }
                let value = try JSONParser.parse(Array(input[start..<position]))
                return value.typeName
            }
        }

        mutating func string() throws(JSONParseError) {
            position += 1
            let start = position
            var plain = true
            while position < input.count {
                let byte = input[position]
                if byte == UInt8(ascii: "\"") {
                    position += 1
                    if plain {
                        guard JSONParser.string(fromUTF8: UnsafeBufferPointer(rebasing: input[start..<(position - 1)])) != nil else {
                            throw JSONParseError(offset: start, reason: "string is not valid UTF-8")
                        }
                    } else {
                        _ = try JSONParser.parse(Array(input[(start - 1)..<position]))
                    }
                    return
                }
                if byte == UInt8(ascii: "\\") {
                    plain = false
                    position += 2
                    continue
                }
                if byte < 0x20 { throw fail("control character in string") }
                position += 1
            }
            throw fail("unterminated string")
        }
    }
}
