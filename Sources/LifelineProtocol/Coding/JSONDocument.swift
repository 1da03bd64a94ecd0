/// JSON text read once (a ``JSONTape``), whose top-level members or elements decode as typed values
/// one by one, straight from the text: a distributed func's arguments.
package struct JSONDocument {
    /// The top level: members by name (a name given twice: its last value), elements in order.
    package enum Root {
        case null
        case object([String: Int])
        case array([Int])
        case other
    }

    private let tape: JSONTape
    package let root: Root

    /// Reads `text` (empty text is `null`).
    /// - Throws: ``JSONParseError`` when it is not JSON.
    package init(text: [UInt8]) throws(JSONParseError) {
        let tape = try JSONTape(text.isEmpty ? Array("null".utf8) : text)
        self.tape = tape
        let top = tape[0]
        switch top.kind {
        case .null: root = .null
        case .object:
            var members: [String: Int] = [:]
            var child = 1
            while child < top.next {
                let value = tape[child].next
                members[tape.string(at: child)] = value
                child = tape[value].next
            }
            root = .object(members)
        case .array:
            var elements: [Int] = []
            var child = 1
            while child < top.next {
                elements.append(child)
                child = tape[child].next
            }
            root = .array(elements)
        default: root = .other
        }
    }

    /// The string at `node` (from ``root``); nil when the value there is not a string.
    package func string(at node: Int) -> String? {
        switch tape[node].kind {
        case .string, .escapedString: tape.string(at: node)
        default: nil
        }
    }

    /// The value at `node` (from ``root``) decoded as `type`.
    /// - Throws: ``PayloadDecodingError`` naming the type, the path inside the value and what was wrong.
    package func decode<T: Decodable>(_ type: T.Type, at node: Int) throws(PayloadDecodingError) -> T {
        try JSONBytesDecoder.decode(type, from: tape, at: node)
    }
}
