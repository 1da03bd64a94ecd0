/// Reads one member of a JSON object without building the whole object: it skips the other
/// members' values and parses only the one asked for. For handlers that look at a field or two of an
/// event (the broker has checked the whole payload already).
package enum JSONFieldReader {
    /// The value of the top-level member `name` of the object in `bytes`; `.none` when there is no such
    /// member, `.some(nil)` when the text cannot be read this way (then parse it whole).
    public static func value(of name: String, in bytes: [UInt8]) -> JSONValue?? {
        bytes.withUnsafeBufferPointer { buffer in
            var reader = Reader(input: buffer)
            var name = name
            return name.withUTF8 { reader.member($0) }
        }
    }

    /// A scalar read in place — an integer, `true`, `false`, `null`, or a string without escapes —
    /// or nil for anything else (then the parser reads it).
    static func scalar(_ text: UnsafeBufferPointer<UInt8>) -> JSONValue? {
        guard let first = text.first else { return nil }
        switch first {
        case UInt8(ascii: "\""):
            guard text.count >= 2, text[text.count - 1] == UInt8(ascii: "\""),
                !text.contains(UInt8(ascii: "\\")), text.allSatisfy({ $0 >= 0x20 })
            else { return nil }
            return .string(
                String(decoding: UnsafeBufferPointer(rebasing: text[1..<(text.count - 1)]), as: UTF8.self))
        case UInt8(ascii: "t"): return text.elementsEqual("true".utf8) ? .bool(true) : nil
        case UInt8(ascii: "f"): return text.elementsEqual("false".utf8) ? .bool(false) : nil
        case UInt8(ascii: "n"): return text.elementsEqual("null".utf8) ? .null : nil
        default:
            // Up to 18 digits cannot overflow Int64; longer numbers, fractions and exponents go to the parser.
            let negative = first == UInt8(ascii: "-")
            let digits = UnsafeBufferPointer(rebasing: text[(negative ? 1 : 0)...])
            guard !digits.isEmpty, digits.count <= 18, digits.count == 1 || digits[0] != UInt8(ascii: "0"),
                digits.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") })
            else { return nil }
            var value: Int64 = 0
            for digit in digits { value = value * 10 + Int64(digit - UInt8(ascii: "0")) }
            return .int(negative ? -value : value)
        }
    }

    private struct Reader {
        let input: UnsafeBufferPointer<UInt8>
        var position = 0

        private mutating func skipWhitespace() {
            while position < input.count {
                switch input[position] {
                case 0x20, 0x0A, 0x0D, 0x09: position += 1
                default: return
                }
            }
        }

        private func at(_ byte: UInt8) -> Bool { position < input.count && input[position] == byte }

        mutating func member(_ name: UnsafeBufferPointer<UInt8>) -> JSONValue?? {
            skipWhitespace()
            guard at(UInt8(ascii: "{")) else { return .some(nil) }
            position += 1
            skipWhitespace()
            if at(UInt8(ascii: "}")) { return .none }
            // Names are compared as their bytes, which is what the tree's `String` keys mean only
            // for ASCII (`"K"` and the Kelvin sign are one key there): other names go to the parser.
            guard name.allSatisfy({ $0 < 0x80 }) else { return .some(nil) }
            // The last of repeated members counts, as in the tree.
            var found: Range<Int>?
            while true {
                skipWhitespace()
                guard at(UInt8(ascii: "\"")) else { return .some(nil) }
                let keyStart = position + 1
                guard let keyEnd = skipString(),
                    input[keyStart..<keyEnd].allSatisfy({ $0 < 0x80 && $0 != UInt8(ascii: "\\") })
                else {
                    return .some(nil)
                }
                skipWhitespace()
                guard at(UInt8(ascii: ":")) else { return .some(nil) }
                position += 1
                skipWhitespace()
                let valueStart = position
                guard skipValue(depth: 0) else { return .some(nil) }
                if input[keyStart..<keyEnd].elementsEqual(name) { found = valueStart..<position }
                skipWhitespace()
                if at(UInt8(ascii: ",")) {
                    position += 1
                } else if at(UInt8(ascii: "}")) {
                    guard let found else { return .none }
                    let value = UnsafeBufferPointer(rebasing: input[found])
                    return .some(JSONFieldReader.scalar(value) ?? (try? JSONParser.parse(value)))
                } else {
                    return .some(nil)
                }
            }
        }

        /// Moves past the string that starts here; returns where its closing quote was.
        private mutating func skipString() -> Int? {
            position += 1
            // Eight bytes at a time while none of them is a quote or a backslash.
            while position + 8 <= input.count {
                let word = UnsafeRawPointer(input.baseAddress! + position).loadUnaligned(as: UInt64.self)
                if ByteComparison.hasByte(0x22, in: word) || ByteComparison.hasByte(0x5C, in: word) { break }
                position += 8
            }
            while position < input.count {
                switch input[position] {
                case UInt8(ascii: "\""):
                    position += 1
                    return position - 1
                case UInt8(ascii: "\\"): position += 2
                default: position += 1
                }
            }
            return nil
        }

        /// Moves past the value that starts here (checked loosely: the broker checked it already).
        private mutating func skipValue(depth: Int) -> Bool {
            guard position < input.count, depth < JSONParser.maximumDepth else { return false }
            switch input[position] {
            case UInt8(ascii: "\""): return skipString() != nil
            case UInt8(ascii: "{"), UInt8(ascii: "["):
                let close = input[position] == UInt8(ascii: "{") ? UInt8(ascii: "}") : UInt8(ascii: "]")
                position += 1
                while true {
                    skipWhitespace()
                    guard position < input.count else { return false }
                    switch input[position] {
                    case close:
                        position += 1
                        return true
                    case UInt8(ascii: ","), UInt8(ascii: ":"): position += 1
                    default: guard skipValue(depth: depth + 1) else { return false }
                    }
                }
            default:
                let start = position
                while position < input.count {
                    switch input[position] {
                    case UInt8(ascii: ","), UInt8(ascii: "}"), UInt8(ascii: "]"), 0x20, 0x0A, 0x0D, 0x09:
                        return position > start
                    default: position += 1
                    }
                }
                return position > start
            }
        }
    }
}
