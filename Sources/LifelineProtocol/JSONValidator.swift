/// Checks that bytes are one JSON document without building it (for payloads the broker only relays).
package enum JSONValidator {
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
            while position < input.count {
                switch input[position] {
                case 0x20, 0x0A, 0x0D, 0x09: position += 1
                default: return
                }
            }
        }

        mutating func expect(_ byte: UInt8, _ what: String) throws(JSONParseError) {
            skipWhitespace()
            guard position < input.count, input[position] == byte else { throw fail("expected \(what)") }
            position += 1
        }

        /// As the parser counts: the containers around a value, scalars not included.
        func enter(_ depth: Int) throws(JSONParseError) {
            guard depth < JSONParser.maximumDepth else {
                throw fail("nested deeper than \(JSONParser.maximumDepth) levels")
            }
        }

        mutating func value(depth: Int) throws(JSONParseError) -> String {
            skipWhitespace()
            guard position < input.count else { throw fail("unexpected end of input") }
            switch input[position] {
            case UInt8(ascii: "{"):
                try enter(depth)
                position += 1
                skipWhitespace()
                if position < input.count, input[position] == UInt8(ascii: "}") {
                    position += 1
                    return "object"
                }
                while true {
                    skipWhitespace()
                    guard position < input.count, input[position] == UInt8(ascii: "\"") else {
                        throw fail("expected a string key")
                    }
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
                try enter(depth)
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
                scalar: while position < input.count {
                    switch input[position] {
                    case UInt8(ascii: ","), UInt8(ascii: "]"), UInt8(ascii: "}"), 0x20, 0x0A, 0x0D, 0x09:
                        break scalar
                    default: position += 1
                    }
                }
                let text = UnsafeBufferPointer(rebasing: input[start..<position])
                if let type = Self.plainScalar(text) { return type }
                return try JSONParser.parse(text).typeName
            }
        }

        /// The type of a literal or of a short number in plain notation, checked here; nil for
        /// anything else (long numbers, exponents, mistakes), which the full parser judges.
        static func plainScalar(_ text: UnsafeBufferPointer<UInt8>) -> String? {
            guard !text.isEmpty else { return nil }
            switch text[0] {
            case UInt8(ascii: "t"): return literal(text, "true") ? "boolean" : nil
            case UInt8(ascii: "f"): return literal(text, "false") ? "boolean" : nil
            case UInt8(ascii: "n"): return literal(text, "null") ? "null" : nil
            default: break
            }
            guard text.count <= 15 else { return nil }
            var index = text[0] == UInt8(ascii: "-") ? 1 : 0
            let digits = index
            while index < text.count, text[index] >= UInt8(ascii: "0"), text[index] <= UInt8(ascii: "9") {
                index += 1
            }
            let integerDigits = index - digits
            guard integerDigits > 0, integerDigits == 1 || text[digits] != UInt8(ascii: "0") else {
                return nil
            }
            if index == text.count { return "number" }
            guard text[index] == UInt8(ascii: "."), index + 1 < text.count else { return nil }
            index += 1
            while index < text.count, text[index] >= UInt8(ascii: "0"), text[index] <= UInt8(ascii: "9") {
                index += 1
            }
            return index == text.count ? "number" : nil
        }

        /// True when none of the eight bytes in `word` ends a string, escapes, is a control
        /// character or is outside ASCII (each of those needs the byte-by-byte path).
        static func isPlain(_ word: UInt64) -> Bool {
            let ones: UInt64 = 0x0101_0101_0101_0101
            let highs: UInt64 = 0x8080_8080_8080_8080
            func hasZeroByte(_ value: UInt64) -> Bool { (value &- ones) & ~value & highs != 0 }
            if word & highs != 0 { return false }
            // With every byte below 0x80, this finds exactly the bytes below 0x20.
            if (word &- 0x20 &* ones) & ~word & highs != 0 { return false }
            return !hasZeroByte(word ^ (0x22 &* ones)) && !hasZeroByte(word ^ (0x5C &* ones))
        }

        static func literal(_ text: UnsafeBufferPointer<UInt8>, _ word: StaticString) -> Bool {
            guard text.count == word.utf8CodeUnitCount else { return false }
            for index in 0..<text.count where text[index] != word.utf8Start[index] { return false }
            return true
        }

        mutating func string() throws(JSONParseError) {
            position += 1
            let start = position
            var plain = true
            var ascii = true
            while position < input.count {
                // Eight plain bytes at a time (payloads are mostly long runs of plain text).
                while position + 8 <= input.count,
                    Self.isPlain(
                        UnsafeRawPointer(input.baseAddress! + position).loadUnaligned(as: UInt64.self))
                {
                    position += 8
                }
                guard position < input.count else { break }
                let byte = input[position]
                if byte == UInt8(ascii: "\"") {
                    position += 1
                    if plain {
                        guard
                            ascii
                                || UTF8Check.isValid(
                                    UnsafeBufferPointer(rebasing: input[start..<(position - 1)]))
                        else {
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
                if byte >= 0x80 { ascii = false }
                position += 1
            }
            throw fail("unterminated string")
        }
    }
}

/// UTF-8 validation without building a String (RFC 3629: no overlongs, no surrogates, ≤ U+10FFFF).
enum UTF8Check {
    static func isValid(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        var index = 0
        let count = bytes.count
        while index < count {
            let lead = bytes[index]
            if lead < 0x80 {
                index += 1
                continue
            }
            let length: Int
            var scalar: UInt32
            switch lead {
            case 0xC2...0xDF: (length, scalar) = (2, UInt32(lead & 0x1F))
            case 0xE0...0xEF: (length, scalar) = (3, UInt32(lead & 0x0F))
            case 0xF0...0xF4: (length, scalar) = (4, UInt32(lead & 0x07))
            default: return false
            }
            guard index + length <= count else { return false }
            for offset in 1..<length {
                let byte = bytes[index + offset]
                guard byte & 0xC0 == 0x80 else { return false }
                scalar = scalar << 6 | UInt32(byte & 0x3F)
            }
            let minimum: UInt32 = length == 2 ? 0x80 : (length == 3 ? 0x800 : 0x10000)
            guard scalar >= minimum, scalar <= 0x10FFFF, !(0xD800...0xDFFF).contains(scalar) else {
                return false
            }
            index += length
        }
        return true
    }
}
