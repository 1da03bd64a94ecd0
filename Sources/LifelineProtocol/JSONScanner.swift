/// What a scan makes of the values it finds: the tape's nodes (``JSONTape``), a tree
/// (``JSONParser``), or nothing (a check that bytes are JSON, ``JSONValidator``).
protocol JSONScanRecord {
    /// What a value becomes.
    associatedtype Value
    /// A container being filled.
    associatedtype Container

    /// A scalar whose text runs from `start` to just before `end`.
    mutating func scalar(_ kind: JSONTape.Kind, start: Int, end: Int) -> Value
    /// A container opening at `start`.
    mutating func open(_ kind: JSONTape.Kind, start: Int) -> Container
    /// A container's next child: an element, or a member's value with its key.
    mutating func add(_ value: Value, key: Value?, to container: inout Container)
    /// The container ends just before `end`, with `count` children (an object's keys and values
    /// both counted).
    mutating func close(_ container: Container, end: Int, count: Int) -> Value
}

/// The JSON grammar (RFC 8259), once for every reader of the project: each of them — the tree
/// parser, the tape the typed decoder and the header readers use, the broker's validator — scans
/// with it, so they accept exactly the same texts and refuse the others with the same offset and
/// reason. Arrays and objects nest at most ``JSONParser/maximumDepth`` deep, so that hostile input
/// cannot exhaust the stack.
struct JSONScanner<Record: JSONScanRecord> {
    private let input: UnsafeBufferPointer<UInt8>
    private(set) var record: Record
    private var position = 0
    private var depth = 0

    init(_ input: UnsafeBufferPointer<UInt8>, record: Record) {
        self.input = input
        self.record = record
    }

    /// Scans one document; whitespace around it is allowed, anything else is an error.
    /// - Returns: the document's value as the record makes it, and its kind.
    /// - Throws: ``JSONParseError``, with the offset where the text stopped being JSON and why.
    mutating func document() throws(JSONParseError) -> (Record.Value, JSONTape.Kind) {
        skipWhitespace()
        let first = position < input.count ? input[position] : 0
        let value = try value()
        skipWhitespace()
        if position < input.count { throw fail("unexpected \(describe(input[position])) after the document") }
        return (value, Self.kind(startingWith: first))
    }

    /// The kind of the value whose text starts with `byte` (a string's is `.string`).
    private static func kind(startingWith byte: UInt8) -> JSONTape.Kind {
        switch byte {
        case UInt8(ascii: "{"): .object
        case UInt8(ascii: "["): .array
        case UInt8(ascii: "\""): .string
        case UInt8(ascii: "t"): .true
        case UInt8(ascii: "f"): .false
        case UInt8(ascii: "n"): .null
        default: .number
        }
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

    private mutating func value() throws(JSONParseError) -> Record.Value {
        guard position < input.count else { throw fail("unexpected end of input") }
        let start = position
        let kind: JSONTape.Kind
        switch input[position] {
        case UInt8(ascii: "{"): return try container(object: true)
        case UInt8(ascii: "["): return try container(object: false)
        case UInt8(ascii: "\""): kind = try string() ? .escapedString : .string
        case UInt8(ascii: "t"): kind = try word("true", .true)
        case UInt8(ascii: "f"): kind = try word("false", .false)
        case UInt8(ascii: "n"): kind = try word("null", .null)
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"):
            try number()
            kind = .number
        default: throw fail("unexpected \(describe(input[position]))")
        }
        return record.scalar(kind, start: start, end: position)
    }

    private mutating func word(_ word: StaticString, _ kind: JSONTape.Kind) throws(JSONParseError)
        -> JSONTape.Kind
    {
        let count = word.utf8CodeUnitCount
        guard position + count <= input.count else { throw fail("expected '\(word)'") }
        for index in 0..<count where input[position + index] != word.utf8Start[index] {
            throw fail("expected '\(word)'")
        }
        position += count
        return kind
    }

    private mutating func container(object: Bool) throws(JSONParseError) -> Record.Value {
        depth += 1
        if depth > JSONParser.maximumDepth {
            throw fail("nested deeper than \(JSONParser.maximumDepth) levels")
        }
        var opened = record.open(object ? .object : .array, start: position)
        let close = object ? UInt8(ascii: "}") : UInt8(ascii: "]")
        position += 1
        var count = 0
        skipWhitespace()
        if position < input.count && input[position] == close {
            position += 1
        } else {
            while true {
                skipWhitespace()
                var key: Record.Value?
                if object {
                    guard position < input.count, input[position] == UInt8(ascii: "\"") else {
                        throw fail("expected a string key")
                    }
                    key = try value()
                    skipWhitespace()
                    guard position < input.count, input[position] == UInt8(ascii: ":") else {
                        throw fail("expected ':'")
                    }
                    position += 1
                    skipWhitespace()
                    count += 1
                }
                let element = try value()
                record.add(element, key: key, to: &opened)
                count += 1
                skipWhitespace()
                guard position < input.count else {
                    throw fail(object ? "unterminated object" : "unterminated array")
                }
                if input[position] == UInt8(ascii: ",") {
                    position += 1
                } else if input[position] == close {
                    position += 1
                    break
                } else {
                    throw fail(object ? "expected ',' or '}'" : "expected ',' or ']'")
                }
            }
        }
        depth -= 1
        return record.close(opened, end: position, count: count)
    }

    private func isDigit(_ byte: UInt8) -> Bool { byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9") }

    private mutating func number() throws(JSONParseError) {
        let start = position
        var scaled = false
        if input[position] == UInt8(ascii: "-") { position += 1 }
        guard position < input.count, isDigit(input[position]) else { throw fail("expected a digit") }
        if input[position] == UInt8(ascii: "0") {
            position += 1
        } else {
            while position < input.count && isDigit(input[position]) { position += 1 }
        }
        if position < input.count && input[position] == UInt8(ascii: ".") {
            position += 1
            guard position < input.count, isDigit(input[position]) else {
                throw fail("expected a digit after '.'")
            }
            while position < input.count && isDigit(input[position]) { position += 1 }
        }
        if position < input.count && (input[position] | 0x20) == UInt8(ascii: "e") {
            scaled = true
            position += 1
            if position < input.count
                && (input[position] == UInt8(ascii: "+") || input[position] == UInt8(ascii: "-"))
            {
                position += 1
            }
            guard position < input.count, isDigit(input[position]) else { throw fail("expected an exponent") }
            while position < input.count && isDigit(input[position]) { position += 1 }
        }
        // A number a double cannot hold would be read as infinity, and written again as null.
        if scaled || position - start > 18 {
            let text = String(decoding: UnsafeBufferPointer(rebasing: input[start..<position]), as: UTF8.self)
            if Double(text)?.isFinite != true {
                let shown = text.count > 24 ? text.prefix(24) + "…" : Substring(text)
                throw JSONParseError(offset: start, reason: "\(shown) is beyond a double's range (±1.8e308)")
            }
        }
    }

    /// True when none of the eight bytes in `word` ends a string, escapes, is a control character
    /// or is outside ASCII (each of those needs the byte-by-byte path).
    static func isPlain(_ word: UInt64) -> Bool {
        let ones: UInt64 = 0x0101_0101_0101_0101
        let highs: UInt64 = 0x8080_8080_8080_8080
        if word & highs != 0 { return false }
        // With every byte below 0x80, this finds exactly the bytes below 0x20.
        if (word &- 0x20 &* ones) & ~word & highs != 0 { return false }
        return !ByteComparison.hasByte(0x22, in: word) && !ByteComparison.hasByte(0x5C, in: word)
    }

    /// Scans a string, its escapes and its UTF-8 checked.
    /// - Returns: whether it holds an escape.
    private mutating func string() throws(JSONParseError) -> Bool {
        position += 1
        let start = position
        var segment = position
        var ascii = true
        var escaped = false
        while position < input.count {
            // Eight plain bytes at a time (payloads are mostly long runs of plain text).
            while position + 8 <= input.count,
                Self.isPlain(UnsafeRawPointer(input.baseAddress! + position).loadUnaligned(as: UInt64.self))
            {
                position += 8
            }
            guard position < input.count else { break }
            let byte = input[position]
            if byte == UInt8(ascii: "\"") {
                let valid =
                    ascii || UTF8Check.isValid(UnsafeBufferPointer(rebasing: input[segment..<position]))
                position += 1
                guard valid else {
                    // An escaped string is judged once it is read whole, as its decoded text.
                    throw escaped
                        ? fail("string is not valid UTF-8")
                        : JSONParseError(offset: start, reason: "string is not valid UTF-8")
                }
                return escaped
            }
            if byte == UInt8(ascii: "\\") {
                // The text between escapes is checked on its own: an escape's text starts a scalar,
                // so a sequence cut by it stays invalid when the pieces are put together.
                if !ascii && !UTF8Check.isValid(UnsafeBufferPointer(rebasing: input[segment..<position])) {
                    try skipToEnd()
                    throw fail("string is not valid UTF-8")
                }
                escaped = true
                position += 1
                try escape()
                segment = position
                ascii = true
                continue
            }
            if byte < 0x20 { throw fail("control character in string") }
            if byte >= 0x80 { ascii = false }
            position += 1
        }
        throw fail("unterminated string")
    }

    /// Reads on to the end of a string already found invalid, so its refusal has the offset the
    /// string's end gives (where a reader of the whole string would judge it); its other faults
    /// come first.
    private mutating func skipToEnd() throws(JSONParseError) {
        while position < input.count {
            let byte = input[position]
            if byte == UInt8(ascii: "\"") {
                position += 1
                return
            }
            if byte == UInt8(ascii: "\\") {
                position += 1
                try escape()
                continue
            }
            if byte < 0x20 { throw fail("control character in string") }
            position += 1
        }
        throw fail("unterminated string")
    }

    /// An escape, from the byte after its backslash.
    private mutating func escape() throws(JSONParseError) {
        guard position < input.count else { throw fail("unterminated escape") }
        let escape = input[position]
        position += 1
        switch escape {
        case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"), UInt8(ascii: "b"), UInt8(ascii: "f"),
            UInt8(ascii: "n"), UInt8(ascii: "r"), UInt8(ascii: "t"):
            return
        case UInt8(ascii: "u"): try unicodeEscape()
        default: throw fail("unknown escape \\\(describe(escape))")
        }
    }

    private mutating func hexQuad() throws(JSONParseError) -> UInt32 {
        guard position + 4 <= input.count else { throw fail("short \\u escape") }
        var value: UInt32 = 0
        for _ in 0..<4 {
            guard let digit = JSONParser.hexDigit(input[position]) else {
                throw fail("bad hex digit in \\u escape")
            }
            value = value << 4 | digit
            position += 1
        }
        return value
    }

    private mutating func unicodeEscape() throws(JSONParseError) {
        let scalar = try hexQuad()
        if (0xD800...0xDBFF).contains(scalar) {
            guard position + 2 <= input.count, input[position] == UInt8(ascii: "\\"),
                input[position + 1] == UInt8(ascii: "u")
            else { throw fail("unpaired surrogate") }
            position += 2
            let low = try hexQuad()
            guard (0xDC00...0xDFFF).contains(low) else { throw fail("unpaired surrogate") }
        } else if (0xDC00...0xDFFF).contains(scalar) {
            throw fail("unpaired surrogate")
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
