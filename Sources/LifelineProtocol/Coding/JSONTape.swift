import Glibc

/// JSON text read once into a flat list of its values — kind and byte range each, a container's
/// extent — so that a `Decodable` type can be decoded straight from the bytes
/// (``JSONBytesDecoder``) without a ``JSONValue`` tree: scalars are read from their bytes when the
/// decoder asks for them, with ``JSONParser``'s own number and string readers. It accepts exactly
/// what ``JSONParser`` accepts (a differential test and the fuzz target hold them together).
struct JSONTape {
    enum Kind: UInt8 {
        case null, `false`, `true`, number, string, escapedString, array, object
    }

    /// One value. An object's children alternate key (a string) and value.
    struct Node {
        var kind: Kind
        /// The value's text: from its first byte to just after its last.
        var start: Int
        var end: Int
        /// The index of the node after this value and everything inside it.
        var next: Int
        /// A container's children (an object's: keys and values).
        var count: Int
    }

    let bytes: [UInt8]
    private(set) var nodes: [Node] = []

    /// Reads `bytes` as one JSON document.
    /// - Throws: ``JSONParseError`` (``JSONParser``'s own, with its offset and reason) when they are
    ///   not one.
    init(_ bytes: [UInt8]) throws(JSONParseError) {
        self.bytes = bytes
        nodes.reserveCapacity(16)
        let scanned = bytes.withUnsafeBufferPointer { buffer -> Bool in
            var scanner = Scanner(input: buffer)
            guard scanner.document(into: &nodes) else { return false }
            return true
        }
        // The parser says precisely what is wrong; the tape only knows that something is.
        guard scanned else {
            _ = try JSONParser.parse(bytes)
            throw JSONParseError(offset: 0, reason: "not JSON")
        }
    }

    subscript(index: Int) -> Node { nodes[index] }

    /// The number at `index` (an integer that fits `Int64`, else a double).
    func number(at index: Int) -> JSONValue {
        let node = nodes[index]
        return bytes.withUnsafeBufferPointer {
            JSONParser.number(UnsafeBufferPointer(rebasing: $0[node.start..<node.end])) ?? .null
        }
    }

    /// The string at `index`.
    func string(at index: Int) -> String {
        let node = nodes[index]
        return bytes.withUnsafeBufferPointer { buffer in
            if node.kind == .string {
                return String(
                    decoding: UnsafeBufferPointer(rebasing: buffer[(node.start + 1)..<(node.end - 1)]),
                    as: UTF8.self)
            }
            return JSONParser.string(UnsafeBufferPointer(rebasing: buffer[node.start..<node.end])) ?? ""
        }
    }

    /// Whether the string at `index` is `key`.
    func string(at index: Int, equals key: String) -> Bool {
        let node = nodes[index]
        guard node.kind == .string else { return string(at: index) == key }
        var key = key
        return key.withUTF8 { wanted in
            guard wanted.count == node.end - node.start - 2 else { return false }
            guard let wantedBase = wanted.baseAddress else { return true }
            return bytes.withUnsafeBufferPointer { buffer in
                memcmp(wantedBase, buffer.baseAddress! + node.start + 1, wanted.count) == 0
            }
        }
    }

    /// The index of the value of member `key` of the object at `index` (its last, as a tree keeps
    /// the last of repeated keys); nil when it has none.
    func member(_ key: String, of index: Int = 0) -> Int? {
        guard nodes[index].kind == .object else { return nil }
        var found: Int?
        var child = index + 1
        while child < nodes[index].next {
            let valueIndex = nodes[child].next
            if string(at: child, equals: key) { found = valueIndex }
            child = nodes[valueIndex].next
        }
        return found
    }

    /// The indexes of the children of the container at `index` (an object's: keys and values
    /// alternating).
    func children(of index: Int) -> [Int] {
        var result: [Int] = []
        result.reserveCapacity(nodes[index].count)
        var child = index + 1
        while child < nodes[index].next {
            result.append(child)
            child = nodes[child].next
        }
        return result
    }

    /// The value at `index` as a tree (for a `JSONValue` member, and for error messages).
    func value(at index: Int) -> JSONValue {
        let node = nodes[index]
        switch node.kind {
        case .null: return .null
        case .false: return .bool(false)
        case .true: return .bool(true)
        case .number: return number(at: index)
        case .string, .escapedString: return .string(string(at: index))
        case .array:
            var elements: [JSONValue] = []
            elements.reserveCapacity(node.count)
            var child = index + 1
            while child < node.next {
                elements.append(value(at: child))
                child = nodes[child].next
            }
            return .array(elements)
        case .object:
            var members: [String: JSONValue] = Dictionary(minimumCapacity: node.count / 2)
            var child = index + 1
            while child < node.next {
                let valueIndex = nodes[child].next
                members[string(at: child)] = value(at: valueIndex)
                child = nodes[valueIndex].next
            }
            return .object(members)
        }
    }

    /// The grammar of RFC 8259 with ``JSONParser``'s limits, recording nodes instead of building values.
    private struct Scanner {
        let input: UnsafeBufferPointer<UInt8>
        var position = 0
        var depth = 0

        mutating func document(into nodes: inout [Node]) -> Bool {
            skipWhitespace()
            guard value(into: &nodes) else { return false }
            skipWhitespace()
            return position == input.count
        }

        private mutating func skipWhitespace() {
            while position < input.count {
                switch input[position] {
                case 0x20, 0x0A, 0x0D, 0x09: position += 1
                default: return
                }
            }
        }

        private mutating func value(into nodes: inout [Node]) -> Bool {
            guard position < input.count else { return false }
            let start = position
            switch input[position] {
            case UInt8(ascii: "{"): return container(into: &nodes, object: true)
            case UInt8(ascii: "["): return container(into: &nodes, object: false)
            case UInt8(ascii: "\""):
                guard let escaped = string() else { return false }
                nodes.append(
                    Node(
                        kind: escaped ? .escapedString : .string, start: start, end: position,
                        next: nodes.count + 1, count: 0))
                return true
            case UInt8(ascii: "t"): return word("true", .true, into: &nodes)
            case UInt8(ascii: "f"): return word("false", .false, into: &nodes)
            case UInt8(ascii: "n"): return word("null", .null, into: &nodes)
            case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"):
                guard number() else { return false }
                nodes.append(
                    Node(kind: .number, start: start, end: position, next: nodes.count + 1, count: 0))
                return true
            default: return false
            }
        }

        private mutating func word(_ word: StaticString, _ kind: Kind, into nodes: inout [Node]) -> Bool {
            let count = word.utf8CodeUnitCount
            guard position + count <= input.count else { return false }
            for index in 0..<count where input[position + index] != word.utf8Start[index] { return false }
            nodes.append(
                Node(kind: kind, start: position, end: position + count, next: nodes.count + 1, count: 0))
            position += count
            return true
        }

        private mutating func container(into nodes: inout [Node], object: Bool) -> Bool {
            depth += 1
            guard depth <= JSONParser.maximumDepth else { return false }
            let index = nodes.count
            nodes.append(Node(kind: object ? .object : .array, start: position, end: 0, next: 0, count: 0))
            let close = object ? UInt8(ascii: "}") : UInt8(ascii: "]")
            position += 1
            var count = 0
            skipWhitespace()
            if position < input.count && input[position] == close {
                position += 1
            } else {
                while true {
                    skipWhitespace()
                    if object {
                        guard position < input.count, input[position] == UInt8(ascii: "\""),
                            value(into: &nodes)
                        else { return false }
                        skipWhitespace()
                        guard position < input.count, input[position] == UInt8(ascii: ":") else {
                            return false
                        }
                        position += 1
                        skipWhitespace()
                        count += 1
                    }
                    guard value(into: &nodes) else { return false }
                    count += 1
                    skipWhitespace()
                    guard position < input.count else { return false }
                    if input[position] == UInt8(ascii: ",") {
                        position += 1
                    } else if input[position] == close {
                        position += 1
                        break
                    } else {
                        return false
                    }
                }
            }
            depth -= 1
            nodes[index].end = position
            nodes[index].next = nodes.count
            nodes[index].count = count
            return true
        }

        private func isDigit(_ byte: UInt8) -> Bool { byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9") }

        private mutating func digits() -> Bool {
            guard position < input.count, isDigit(input[position]) else { return false }
            while position < input.count && isDigit(input[position]) { position += 1 }
            return true
        }

        private mutating func number() -> Bool {
            if input[position] == UInt8(ascii: "-") { position += 1 }
            guard position < input.count, isDigit(input[position]) else { return false }
            if input[position] == UInt8(ascii: "0") { position += 1 } else { _ = digits() }
            if position < input.count && input[position] == UInt8(ascii: ".") {
                position += 1
                guard digits() else { return false }
            }
            if position < input.count && (input[position] | 0x20) == UInt8(ascii: "e") {
                position += 1
                if position < input.count
                    && (input[position] == UInt8(ascii: "+") || input[position] == UInt8(ascii: "-"))
                {
                    position += 1
                }
                guard digits() else { return false }
            }
            return true
        }

        /// Skips a string; true when it holds an escape, nil when it is not a valid one.
        private mutating func string() -> Bool? {
            let start = position
            position += 1
            var ascii = true
            while position < input.count {
                let byte = input[position]
                if byte == UInt8(ascii: "\"") {
                    position += 1
                    if !ascii
                        && !UTF8Check.isValid(
                            UnsafeBufferPointer(rebasing: input[(start + 1)..<(position - 1)]))
                    {
                        return nil
                    }
                    return false
                }
                if byte == UInt8(ascii: "\\") {
                    // Rare: the parser's own reader checks the escapes and finds the end.
                    let parser = Scanner(input: input, position: start)
                    guard let end = parser.escapedEnd() else { return nil }
                    position = end
                    return true
                }
                if byte < 0x20 { return nil }
                if byte >= 0x80 { ascii = false }
                position += 1
            }
            return nil
        }

        /// Where the escaped string starting at `position` ends, as the parser reads it.
        private func escapedEnd() -> Int? {
            var index = position + 1
            while index < input.count {
                if input[index] == UInt8(ascii: "\\") {
                    index += 2
                    continue
                }
                if input[index] == UInt8(ascii: "\"") {
                    let end = index + 1
                    guard JSONParser.string(UnsafeBufferPointer(rebasing: input[position..<end])) != nil
                    else {
                        return nil
                    }
                    return end
                }
                index += 1
            }
            return nil
        }
    }
}
