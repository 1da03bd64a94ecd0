import Glibc

/// JSON text read once into a flat list of its values — kind and byte range each, a container's
/// extent — so that a `Decodable` type can be decoded straight from the bytes
/// (``JSONBytesDecoder``) without a ``JSONValue`` tree: scalars are read from their bytes when the
/// decoder asks for them, with ``JSONParser``'s number and string readers. ``JSONScanner`` reads
/// the grammar, as it does for the tree parser, so both accept exactly the same texts.
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
    /// - Throws: ``JSONParseError`` with the offset where the text stopped being JSON and why.
    init(_ bytes: [UInt8]) throws(JSONParseError) {
        self.bytes = bytes
        nodes = try bytes.withUnsafeBufferPointer { (buffer) throws(JSONParseError) -> [Node] in
            var scanner = JSONScanner(buffer, record: TapeRecord(capacity: 16))
            _ = try scanner.document()
            return scanner.record.nodes
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

    /// The JSON text of the value at `index`.
    func text(at index: Int) -> [UInt8] { Array(bytes[nodes[index].start..<nodes[index].end]) }

    /// Whether the string at `index` is `key`, as `String`s are equal (the tree's keys): the same
    /// bytes are the same string, different ASCII bytes different ones, and anything else is
    /// compared as strings (`"K"` and the Kelvin sign are one key).
    func string(at index: Int, equals key: String) -> Bool {
        let node = nodes[index]
        guard node.kind == .string else { return string(at: index) == key }
        var key = key
        let plain = key.withUTF8 { wanted -> Bool? in
            bytes.withUnsafeBufferPointer { buffer -> Bool? in
                let text = UnsafeBufferPointer(rebasing: buffer[(node.start + 1)..<(node.end - 1)])
                if text.count == wanted.count
                    && (text.isEmpty || memcmp(wanted.baseAddress!, text.baseAddress!, text.count) == 0)
                {
                    return true
                }
                return wanted.allSatisfy({ $0 < 0x80 }) && text.allSatisfy({ $0 < 0x80 }) ? false : nil
            }
        }
        return plain ?? (string(at: index) == key)
    }

    /// The index of the value of member `key` of the object at `index` (its last, as a tree keeps
    /// the last of repeated keys); nil when it has none.
    func member(_ key: String, of index: Int = 0) -> Int? {
        guard nodes[index].kind == .object else { return nil }
        var found: Int?
        forEachMember(of: index) { name, value in
            if string(at: name, equals: key) { found = value }
        }
        return found
    }

    /// Calls `body` with the name node and the value node of each member of the object at `index`,
    /// in the text's order.
    func forEachMember(of index: Int, _ body: (_ name: Int, _ value: Int) -> Void) {
        var child = index + 1
        while child < nodes[index].next {
            let value = nodes[child].next
            body(child, value)
            child = nodes[value].next
        }
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

    /// The value at `index` as a tree (the parser's result, a `JSONValue` member, error messages).
    func value(at index: Int) -> JSONValue {
        bytes.withUnsafeBufferPointer { buffer in
            nodes.withUnsafeBufferPointer { nodes in Self.value(at: index, nodes, buffer) }
        }
    }

    private static func value(
        at index: Int, _ nodes: UnsafeBufferPointer<Node>, _ buffer: UnsafeBufferPointer<UInt8>
    ) -> JSONValue {
        let node = nodes[index]
        switch node.kind {
        case .null, .false, .true, .number, .string, .escapedString:
            return JSONParser.scalar(node.kind, UnsafeBufferPointer(rebasing: buffer[node.start..<node.end]))
        case .array:
            var elements: [JSONValue] = []
            elements.reserveCapacity(node.count)
            var child = index + 1
            while child < node.next {
                elements.append(value(at: child, nodes, buffer))
                child = nodes[child].next
            }
            return .array(elements)
        case .object:
            var members: [String: JSONValue] = Dictionary(minimumCapacity: node.count / 2)
            var child = index + 1
            while child < node.next {
                let valueIndex = nodes[child].next
                members[string(nodes[child], buffer)] = value(at: valueIndex, nodes, buffer)
                child = nodes[valueIndex].next
            }
            return .object(members)
        }
    }

    private static func string(_ node: Node, _ buffer: UnsafeBufferPointer<UInt8>) -> String {
        if node.kind == .string {
            return String(
                decoding: UnsafeBufferPointer(rebasing: buffer[(node.start + 1)..<(node.end - 1)]),
                as: UTF8.self)
        }
        return JSONParser.string(UnsafeBufferPointer(rebasing: buffer[node.start..<node.end])) ?? ""
    }
}

/// Keeps each value the scanner finds as a ``JSONTape/Node``.
struct TapeRecord: JSONScanRecord {
    var nodes: [JSONTape.Node] = []

    init(capacity: Int) { nodes.reserveCapacity(capacity) }

    mutating func scalar(_ kind: JSONTape.Kind, start: Int, end: Int) {
        nodes.append(JSONTape.Node(kind: kind, start: start, end: end, next: nodes.count + 1, count: 0))
    }

    mutating func open(_ kind: JSONTape.Kind, start: Int) -> Int {
        nodes.append(JSONTape.Node(kind: kind, start: start, end: 0, next: 0, count: 0))
        return nodes.count - 1
    }

    func add(_ value: Void, key: Void?, to container: inout Int) {}

    mutating func close(_ opened: Int, end: Int, count: Int) {
        nodes[opened].end = end
        nodes[opened].next = nodes.count
        nodes[opened].count = count
    }
}

extension JSONTape {
    /// The path of the first object member whose name its object gives twice (`keys.gw.admin`), in
    /// document order; nil when every object names each member once.
    func firstRepeatedMember(at index: Int = 0, path: String = "") -> String? {
        guard index < nodes.count else { return nil }
        switch nodes[index].kind {
        case .object:
            var names: Set<String> = []
            var found: String?
            forEachMember(of: index) { name, value in
                guard found == nil else { return }
                let member = string(at: name)
                let inner = path.isEmpty ? member : "\(path).\(member)"
                if !names.insert(member).inserted {
                    found = inner
                } else {
                    found = firstRepeatedMember(at: value, path: inner)
                }
            }
            return found
        case .array:
            for (position, child) in children(of: index).enumerated() {
                if let found = firstRepeatedMember(at: child, path: "\(path)[\(position)]") { return found }
            }
            return nil
        default: return nil
        }
    }
}
