/// JSON text read once (a ``JSONTape``), whose top-level members or elements decode as typed values
/// one by one, straight from the text: a distributed func's arguments.
package struct JSONDocument {
    /// The top level: its members, elements in order.
    package enum Root {
        case null
        case object(Members)
        case array([Int])
        case other
    }

    /// The top-level object's members, found by name on the tape (an object of a few members is
    /// looked through, not hashed).
    package struct Members {
        fileprivate let tape: JSONTape

        /// The value of member `name` (a name given twice: its last value; names equal as `String`s
        /// are, a `K` and a Kelvin sign, are one name, as in a tree), or nil.
        package subscript(name: String) -> Int? { tape.member(name) }

        /// The members' names, in the text's order (a repeated one as often as it is given).
        package var names: [String] {
            var names: [String] = []
            tape.forEachMember(of: 0) { name, _ in names.append(tape.string(at: name)) }
            return names
        }

        /// True when every member is named by one of `names`.
        package func allNamed(in names: [String]) -> Bool {
            var all = true
            tape.forEachMember(of: 0) { name, _ in
                if all && !names.contains(where: { tape.string(at: name, equals: $0) }) { all = false }
            }
            return all
        }
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
        case .object: root = .object(Members(tape: tape))
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
