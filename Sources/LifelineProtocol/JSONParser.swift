/// Why some bytes are not a JSON document.
package struct JSONParseError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The byte offset where parsing stopped.
    public let offset: Int
    /// What was expected or wrong there.
    public let reason: String

    public var description: String { "invalid JSON at byte \(offset): \(reason)" }
}

/// Parses UTF-8 JSON text (RFC 8259) into ``JSONValue``, with a nesting limit so that hostile input
/// cannot exhaust the stack.
package struct JSONParser {
    /// The deepest nesting of arrays and objects accepted.
    public static let maximumDepth = 64

    /// Parses `bytes` as one JSON document; whitespace around it is allowed, anything else is an error.
    public static func parse(_ bytes: [UInt8]) throws(JSONParseError) -> JSONValue {
        try bytes.withUnsafeBufferPointer { (buffer) throws(JSONParseError) -> JSONValue in
            var parser = JSONParser(buffer)
            return try parser.document()
        }
    }

    /// Parses the bytes in `buffer` as one JSON document.
    public static func parse(_ buffer: UnsafeBufferPointer<UInt8>) throws(JSONParseError) -> JSONValue {
        var parser = JSONParser(buffer)
        return try parser.document()
    }

    /// Parses the UTF-8 bytes of `text`.
    public static func parse(_ text: String) throws(JSONParseError) -> JSONValue {
        try parse(Array(text.utf8))
    }

    /// The value of the number whose text is `text`, as ``parse(_:)-([UInt8])`` reads it: an
    /// integer that fits `Int64` stays one, anything else is a `Double`. Nil for text that is not one.
    static func number(_ text: UnsafeBufferPointer<UInt8>) -> JSONValue? {
        var parser = JSONParser(text)
        guard let value = try? parser.parseNumber(), parser.position == text.count else { return nil }
        return value
    }

    /// The string whose JSON text (quotes included) is `text`, escapes resolved. Nil when it is not one.
    static func string(_ text: UnsafeBufferPointer<UInt8>) -> String? {
        var parser = JSONParser(text)
        guard let value = try? parser.parseString(), parser.position == text.count else { return nil }
        return value
    }

    private let input: UnsafeBufferPointer<UInt8>
    private var position = 0
    private var depth = 0

    private init(_ input: UnsafeBufferPointer<UInt8>) { self.input = input }

    private mutating func document() throws(JSONParseError) -> JSONValue {
        skipWhitespace()
        let value = try parseValue()
        skipWhitespace()
        if position < input.count { throw fail("unexpected \(describe(input[position])) after the document") }
        return value
    }

    private func fail(_ reason: String) -> JSONParseError { JSONParseError(offset: position, reason: reason) }

    private func describe(_ byte: UInt8) -> String {
        (0x21...0x7E).contains(byte)
            ? "'\(Character(Unicode.Scalar(byte)))'" : "byte 0x\(String(byte, radix: 16))"
    }

    private mutating func skipWhitespace() {
        while position < input.count {
            switch input[position] {
            case 0x20, 0x0A, 0x0D, 0x09: position += 1
            default: return
            }
        }
    }

    private mutating func parseValue() throws(JSONParseError) -> JSONValue {
        guard position < input.count else { throw fail("unexpected end of input") }
        switch input[position] {
        case UInt8(ascii: "{"): return try parseObject()
        case UInt8(ascii: "["): return try parseArray()
        case UInt8(ascii: "\""): return .string(try parseString())
        case UInt8(ascii: "t"): try expectWord("true"); return .bool(true)
        case UInt8(ascii: "f"): try expectWord("false"); return .bool(false)
        case UInt8(ascii: "n"): try expectWord("null"); return .null
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return try parseNumber()
        default: throw fail("unexpected \(describe(input[position]))")
        }
    }

    private mutating func expectWord(_ word: StaticString) throws(JSONParseError) {
        let count = word.utf8CodeUnitCount
        guard position + count <= input.count else { throw fail("expected '\(word)'") }
        for index in 0..<count where input[position + index] != word.utf8Start[index] {
            throw fail("expected '\(word)'")
        }
        position += count
    }

    private mutating func enter() throws(JSONParseError) {
        depth += 1
        if depth > JSONParser.maximumDepth {
            throw fail("nested deeper than \(JSONParser.maximumDepth) levels")
        }
    }

    private mutating func parseObject() throws(JSONParseError) -> JSONValue {
        try enter()
        position += 1
        var members: [String: JSONValue] = Dictionary(minimumCapacity: 4)
        skipWhitespace()
        if position < input.count && input[position] == UInt8(ascii: "}") {
            position += 1
            depth -= 1
            return .object([:])
        }
        while true {
            skipWhitespace()
            guard position < input.count, input[position] == UInt8(ascii: "\"") else {
                throw fail("expected a string key")
            }
            let key = try parseString()
            skipWhitespace()
            guard position < input.count, input[position] == UInt8(ascii: ":") else {
                throw fail("expected ':'")
            }
            position += 1
            skipWhitespace()
            members[key] = try parseValue()
            skipWhitespace()
            guard position < input.count else { throw fail("unterminated object") }
            if input[position] == UInt8(ascii: ",") {
                position += 1
            } else if input[position] == UInt8(ascii: "}") {
                position += 1
                depth -= 1
                return .object(members)
            } else {
                throw fail("expected ',' or '}'")
            }
        }
    }

    private mutating func parseArray() throws(JSONParseError) -> JSONValue {
        try enter()
        position += 1
        var elements: [JSONValue] = []
        skipWhitespace()
        if position < input.count && input[position] == UInt8(ascii: "]") {
            position += 1
            depth -= 1
            return .array(elements)
        }
        while true {
            skipWhitespace()
            elements.append(try parseValue())
            skipWhitespace()
            guard position < input.count else { throw fail("unterminated array") }
            if input[position] == UInt8(ascii: ",") {
                position += 1
            } else if input[position] == UInt8(ascii: "]") {
                position += 1
                depth -= 1
                return .array(elements)
            } else {
                throw fail("expected ',' or ']'")
            }
        }
    }

    private mutating func parseNumber() throws(JSONParseError) -> JSONValue {
        let start = position
        var isInteger = true
        if input[position] == UInt8(ascii: "-") { position += 1 }
        guard position < input.count, isDigit(input[position]) else { throw fail("expected a digit") }
        if input[position] == UInt8(ascii: "0") {
            position += 1
        } else {
            while position < input.count && isDigit(input[position]) { position += 1 }
        }
        if position < input.count && input[position] == UInt8(ascii: ".") {
            isInteger = false
            position += 1
            guard position < input.count, isDigit(input[position]) else {
                throw fail("expected a digit after '.'")
            }
            while position < input.count && isDigit(input[position]) { position += 1 }
        }
        if position < input.count && (input[position] | 0x20) == UInt8(ascii: "e") {
            isInteger = false
            position += 1
            if position < input.count
                && (input[position] == UInt8(ascii: "+") || input[position] == UInt8(ascii: "-"))
            {
                position += 1
            }
            guard position < input.count, isDigit(input[position]) else { throw fail("expected an exponent") }
            while position < input.count && isDigit(input[position]) { position += 1 }
        }
        let text = String(decoding: UnsafeBufferPointer(rebasing: input[start..<position]), as: UTF8.self)
        if isInteger, let integer = Int64(text) { return .int(integer) }
        guard let number = Double(text) else { throw JSONParseError(offset: start, reason: "bad number") }
        return .double(number)
    }

    /// Decodes UTF-8, refusing invalid sequences.
    static func string(fromUTF8 bytes: UnsafeBufferPointer<UInt8>) -> String? {
        UTF8Check.isValid(bytes) ? String(decoding: bytes, as: UTF8.self) : nil
    }

    private func isDigit(_ byte: UInt8) -> Bool { byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9") }

    private mutating func parseString() throws(JSONParseError) -> String {
        position += 1
        let start = position
        var ascii = true
        while position < input.count {
            let byte = input[position]
            if byte == UInt8(ascii: "\"") {
                let raw = UnsafeBufferPointer(rebasing: input[start..<position])
                position += 1
                if ascii { return String(decoding: raw, as: UTF8.self) }
                guard let text = JSONParser.string(fromUTF8: raw) else {
                    throw JSONParseError(offset: start, reason: "string is not valid UTF-8")
                }
                return text
            }
            if byte == UInt8(ascii: "\\") {
                position = start
                return try parseEscapedString()
            }
            if byte < 0x20 { throw fail("control character in string") }
            if byte >= 0x80 { ascii = false }
            position += 1
        }
        throw fail("unterminated string")
    }

    private mutating func parseEscapedString() throws(JSONParseError) -> String {
        var bytes: [UInt8] = []
        while position < input.count {
            let byte = input[position]
            switch byte {
            case UInt8(ascii: "\""):
                position += 1
                guard let text = String(validating: bytes, as: UTF8.self) else {
                    throw fail("string is not valid UTF-8")
                }
                return text
            case UInt8(ascii: "\\"):
                position += 1
                guard position < input.count else { throw fail("unterminated escape") }
                let escape = input[position]
                position += 1
                switch escape {
                case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): bytes.append(escape)
                case UInt8(ascii: "b"): bytes.append(0x08)
                case UInt8(ascii: "f"): bytes.append(0x0C)
                case UInt8(ascii: "n"): bytes.append(0x0A)
                case UInt8(ascii: "r"): bytes.append(0x0D)
                case UInt8(ascii: "t"): bytes.append(0x09)
                case UInt8(ascii: "u"): bytes.append(contentsOf: try parseUnicodeEscape())
                default: throw fail("unknown escape \\\(describe(escape))")
                }
            case 0..<0x20: throw fail("control character in string")
            default:
                bytes.append(byte)
                position += 1
            }
        }
        throw fail("unterminated string")
    }

    private mutating func hexQuad() throws(JSONParseError) -> UInt32 {
        guard position + 4 <= input.count else { throw fail("short \\u escape") }
        var value: UInt32 = 0
        for _ in 0..<4 {
            let byte = input[position]
            let digit: UInt32
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = UInt32(byte - UInt8(ascii: "0"))
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = UInt32(byte - UInt8(ascii: "a") + 10)
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = UInt32(byte - UInt8(ascii: "A") + 10)
            default: throw fail("bad hex digit in \\u escape")
            }
            value = value << 4 | digit
            position += 1
        }
        return value
    }

    private mutating func parseUnicodeEscape() throws(JSONParseError) -> [UInt8] {
        var scalar = try hexQuad()
        if (0xD800...0xDBFF).contains(scalar) {
            guard position + 2 <= input.count, input[position] == UInt8(ascii: "\\"),
                input[position + 1] == UInt8(ascii: "u")
            else { throw fail("unpaired surrogate") }
            position += 2
            let low = try hexQuad()
            guard (0xDC00...0xDFFF).contains(low) else { throw fail("unpaired surrogate") }
            scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
        } else if (0xDC00...0xDFFF).contains(scalar) {
            throw fail("unpaired surrogate")
        }
        guard let unicode = Unicode.Scalar(scalar) else { throw fail("invalid code point") }
        return Array(String(Character(unicode)).utf8)
    }
}
