/// Why some bytes are not a JSON document.
package struct JSONParseError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The byte offset where parsing stopped.
    public let offset: Int
    /// What was expected or wrong there.
    public let reason: String

    public var description: String { "invalid JSON at byte \(offset): \(reason)" }
}

/// Parses UTF-8 JSON text (RFC 8259) into ``JSONValue``, as ``JSONScanner`` reads the grammar.
/// Also reads one number or string from its JSON text, for the tape's scalars.
package enum JSONParser {
    /// The path of the first object member named twice in its object (`keys.gw.admin`), for
    /// documents where the parser's rule — the last value wins — would hide a mistake; nil when there
    /// is none.
    /// - Throws: ``JSONParseError`` when `bytes` is not JSON.
    package static func firstRepeatedMember(in bytes: [UInt8]) throws(JSONParseError) -> String? {
        try JSONTape(bytes).firstRepeatedMember()
    }

    /// The deepest nesting of arrays and objects accepted.
    public static let maximumDepth = 64

    /// Parses `bytes` as one JSON document; whitespace around it is allowed, anything else is an error.
    /// - Throws: ``JSONParseError`` with the offset where the text stopped being JSON and why.
    public static func parse(_ bytes: [UInt8]) throws(JSONParseError) -> JSONValue {
        try bytes.withUnsafeBufferPointer { (buffer) throws(JSONParseError) -> JSONValue in try parse(buffer)
        }
    }

    /// Parses the bytes in `buffer` as one JSON document.
    /// - Throws: ``JSONParseError`` with the offset where the text stopped being JSON and why.
    public static func parse(_ buffer: UnsafeBufferPointer<UInt8>) throws(JSONParseError) -> JSONValue {
        var scanner = JSONScanner(buffer, record: TreeRecord(input: buffer))
        return try scanner.document().0
    }

    /// Parses the UTF-8 bytes of `text`.
    /// - Throws: ``JSONParseError`` with the offset where the text stopped being JSON and why.
    public static func parse(_ text: String) throws(JSONParseError) -> JSONValue {
        try parse(Array(text.utf8))
    }

    /// The value of a number the scanner accepted, from its text: an integer that fits `Int64`
    /// stays one, anything else is a `Double`. Nil for text that is not a number.
    static func number(_ text: UnsafeBufferPointer<UInt8>) -> JSONValue? {
        guard let first = text.first else { return nil }
        let isInteger = !text.contains { $0 == UInt8(ascii: ".") || $0 | 0x20 == UInt8(ascii: "e") }
        let negative = first == UInt8(ascii: "-")
        let digits = UnsafeBufferPointer(rebasing: text[(negative ? 1 : 0)...])
        // Up to 18 digits cannot overflow Int64.
        if isInteger, !digits.isEmpty, digits.count <= 18 {
            var value: Int64 = 0
            for digit in digits {
                guard digit >= UInt8(ascii: "0"), digit <= UInt8(ascii: "9") else { return nil }
                value = value * 10 + Int64(digit - UInt8(ascii: "0"))
            }
            return .int(negative ? -value : value)
        }
        let string = String(decoding: text, as: UTF8.self)
        if isInteger, let integer = Int64(string) { return .int(integer) }
        return Double(string).map { .double($0) }
    }

    /// The value of a scalar of `kind` the scanner accepted, from its text (a string's quotes
    /// included): the one conversion of the tree parser and of ``JSONTape/value(at:)``.
    static func scalar(_ kind: JSONTape.Kind, _ text: UnsafeBufferPointer<UInt8>) -> JSONValue {
        switch kind {
        case .null: return .null
        case .false: return .bool(false)
        case .true: return .bool(true)
        case .number: return number(text) ?? .null
        case .string:
            return .string(
                String(decoding: UnsafeBufferPointer(rebasing: text[1..<(text.count - 1)]), as: UTF8.self))
        case .escapedString, .array, .object: return .string(string(text) ?? "")
        }
    }

    /// The string whose JSON text (quotes included) the scanner accepted, escapes resolved. Nil for
    /// text that is not a string.
    static func string(_ text: UnsafeBufferPointer<UInt8>) -> String? {
        guard text.count >= 2, text[0] == UInt8(ascii: "\""), text[text.count - 1] == UInt8(ascii: "\"")
        else {
            return nil
        }
        let inner = UnsafeBufferPointer(rebasing: text[1..<(text.count - 1)])
        guard inner.contains(UInt8(ascii: "\\")) else {
            return UTF8Check.isValid(inner) ? String(decoding: inner, as: UTF8.self) : nil
        }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(inner.count)
        var index = 0
        while index < inner.count {
            let byte = inner[index]
            index += 1
            guard byte == UInt8(ascii: "\\") else {
                bytes.append(byte)
                continue
            }
            guard index < inner.count else { return nil }
            let escape = inner[index]
            index += 1
            switch escape {
            case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): bytes.append(escape)
            case UInt8(ascii: "b"): bytes.append(0x08)
            case UInt8(ascii: "f"): bytes.append(0x0C)
            case UInt8(ascii: "n"): bytes.append(0x0A)
            case UInt8(ascii: "r"): bytes.append(0x0D)
            case UInt8(ascii: "t"): bytes.append(0x09)
            case UInt8(ascii: "u"):
                guard var scalar = hexQuad(inner, at: index) else { return nil }
                index += 4
                if (0xD800...0xDBFF).contains(scalar) {
                    guard index + 2 <= inner.count, inner[index] == UInt8(ascii: "\\"),
                        inner[index + 1] == UInt8(ascii: "u"), let low = hexQuad(inner, at: index + 2),
                        (0xDC00...0xDFFF).contains(low)
                    else { return nil }
                    index += 6
                    scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
                }
                guard let unicode = Unicode.Scalar(scalar) else { return nil }
                bytes.append(contentsOf: String(Character(unicode)).utf8)
            default: return nil
            }
        }
        return String(validating: bytes, as: UTF8.self)
    }

    /// The value of a hexadecimal digit, nil for any other byte.
    static func hexDigit(_ byte: UInt8) -> UInt32? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): UInt32(byte - UInt8(ascii: "0"))
        case UInt8(ascii: "a")...UInt8(ascii: "f"): UInt32(byte - UInt8(ascii: "a") + 10)
        case UInt8(ascii: "A")...UInt8(ascii: "F"): UInt32(byte - UInt8(ascii: "A") + 10)
        default: nil
        }
    }

    private static func hexQuad(_ text: UnsafeBufferPointer<UInt8>, at index: Int) -> UInt32? {
        guard index + 4 <= text.count else { return nil }
        var value: UInt32 = 0
        for offset in 0..<4 {
            guard let digit = hexDigit(text[index + offset]) else { return nil }
            value = value << 4 | digit
        }
        return value
    }
}

/// Builds each value the scanner finds into a ``JSONValue``.
private struct TreeRecord: JSONScanRecord {
    let input: UnsafeBufferPointer<UInt8>

    struct Container {
        var elements: [JSONValue] = []
        var members: [String: JSONValue] = [:]
        let object: Bool
    }

    func scalar(_ kind: JSONTape.Kind, start: Int, end: Int) -> JSONValue {
        JSONParser.scalar(kind, UnsafeBufferPointer(rebasing: input[start..<end]))
    }

    func open(_ kind: JSONTape.Kind, start: Int) -> Container {
        kind == .object
            ? Container(members: Dictionary(minimumCapacity: 4), object: true) : Container(object: false)
    }

    func add(_ value: JSONValue, key: JSONValue?, to container: inout Container) {
        if case .string(let key)? = key {
            container.members[key] = value
        } else {
            container.elements.append(value)
        }
    }

    func close(_ container: Container, end: Int, count: Int) -> JSONValue {
        container.object ? .object(container.members) : .array(container.elements)
    }
}
