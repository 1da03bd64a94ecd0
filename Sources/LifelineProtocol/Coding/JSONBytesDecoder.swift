/// Decodes `Decodable` values straight from JSON text, through a ``JSONTape`` — no ``JSONValue``
/// tree — with the rules and the errors of ``JSONValueDecoder``: the same type decodes from the
/// same document to the same value, or fails with the same ``PayloadDecodingError``.
package enum JSONBytesDecoder {
    /// Decodes `type` from `bytes` (empty bytes are `null`).
    /// - Throws: ``PayloadDecodingError`` when the bytes are not JSON or do not fit `type`, naming
    ///   the type, the coding path and what was wrong.
    package static func decode<T: Decodable>(_ type: T.Type, from bytes: [UInt8]) throws(PayloadDecodingError)
        -> T
    {
        let tape: JSONTape
        do {
            tape = try JSONTape(bytes.isEmpty ? Array("null".utf8) : bytes)
        } catch {
            throw PayloadDecodingError(
                type: String(describing: T.self), path: "", reason: "not JSON: \(error)")
        }
        return try decode(type, from: tape, at: 0)
    }

    /// Decodes `type` from the value at `index` of `tape`; coding paths start at that value.
    static func decode<T: Decodable>(_ type: T.Type, from tape: JSONTape, at index: Int)
        throws(PayloadDecodingError) -> T
    {
        if T.self == JSONValue.self { return tape.value(at: index) as! T }
        do {
            return try T(from: TapeDecoder(tape: TapeReference(tape, root: index), index: index))
        } catch {
            throw .thrown(error, decoding: T.self)
        }
    }
}

/// One tape shared by the decoders of its values, and the node the decoding started at.
final class TapeReference {
    let tape: JSONTape
    let root: Int

    init(_ tape: JSONTape, root: Int) {
        self.tape = tape
        self.root = root
    }

    /// The coding path from the root to the value at `index`, read off the tape: the names of the
    /// members and the positions of the elements that hold it.
    func path(to index: Int) -> [any CodingKey] {
        var path: [any CodingKey] = []
        var node = root
        descending: while node != index {
            let container = tape[node]
            var child = node + 1
            var position = 0
            while child < container.next {
                let value = container.kind == .object ? tape[child].next : child
                if index >= value && index < tape[value].next {
                    path.append(
                        container.kind == .object
                            ? JSONKey(member: tape.string(at: child)) : JSONKey(index: position))
                    node = value
                    continue descending
                }
                child = tape[value].next
                position += 1
            }
            break
        }
        return path
    }
}

/// The decoder of the value at one node of the tape: two words, so that handing it to a type's
/// `init(from:)` as `any Decoder` does not allocate. Its coding path is read off the tape only when
/// asked for (an error, a type that reads it): most values never need it.
struct TapeDecoder: Decoder {
    let tape: TapeReference
    let index: Int
    var path: [any CodingKey] { tape.path(to: index) }
    var codingPath: [any CodingKey] { path }
    var userInfo: [CodingUserInfoKey: Any] { [:] }
    var node: JSONTape.Node { tape.tape[index] }

    func mismatch(_ expected: String) -> PayloadDecodingError {
        PayloadDecodingError(
            path: path, reason: "expected \(expected), found \(tape.tape.value(at: index).typeDescription)")
    }

    func container<Key: CodingKey>(keyedBy type: Key.Type) throws -> KeyedDecodingContainer<Key> {
        guard node.kind == .object else { throw mismatch("an object") }
        return KeyedDecodingContainer(TapeObjectContainer<Key>(tape: tape, index: index))
    }

    func unkeyedContainer() throws -> any UnkeyedDecodingContainer {
        guard node.kind == .array else { throw mismatch("an array") }
        return TapeArrayContainer(tape: tape, index: index)
    }

    func singleValueContainer() throws -> any SingleValueDecodingContainer { self }
}

extension TapeDecoder: SingleValueDecodingContainer {
    func decodeNil() -> Bool { node.kind == .null }

    func decode(_ type: Bool.Type) throws -> Bool {
        switch node.kind {
        case .true: return true
        case .false: return false
        default: throw mismatch("a boolean")
        }
    }

    func decode(_ type: String.Type) throws -> String {
        guard node.kind == .string || node.kind == .escapedString else { throw mismatch("a string") }
        return tape.tape.string(at: index)
    }

    func decode(_ type: Double.Type) throws -> Double {
        guard node.kind == .number, let number = tape.tape.number(at: index).doubleValue else {
            throw mismatch("a number")
        }
        return number
    }

    func decode(_ type: Float.Type) throws -> Float { Float(try decode(Double.self)) }

    /// A number's rules are the tree's: the number read from the text, judged by ``ValueDecoder``.
    func integer<T: FixedWidthInteger>(_ type: T.Type) throws -> T {
        guard node.kind == .number else { throw mismatch("an integer") }
        let number = tape.tape.number(at: index)
        // The usual case, an integer that fits, without putting the coding path together.
        if case .int(let value) = number, let exact = T(exactly: value) { return exact }
        return try ValueDecoder(value: number, path: path).integer(type)
    }

    func decode(_ type: Int.Type) throws -> Int { try integer(type) }
    func decode(_ type: Int8.Type) throws -> Int8 { try integer(type) }
    func decode(_ type: Int16.Type) throws -> Int16 { try integer(type) }
    func decode(_ type: Int32.Type) throws -> Int32 { try integer(type) }
    func decode(_ type: Int64.Type) throws -> Int64 { try integer(type) }
    func decode(_ type: UInt.Type) throws -> UInt { try integer(type) }
    func decode(_ type: UInt8.Type) throws -> UInt8 { try integer(type) }
    func decode(_ type: UInt16.Type) throws -> UInt16 { try integer(type) }
    func decode(_ type: UInt32.Type) throws -> UInt32 { try integer(type) }
    func decode(_ type: UInt64.Type) throws -> UInt64 { try integer(type) }

    func decode<T: Decodable>(_ type: T.Type) throws -> T {
        if T.self == JSONValue.self { return tape.tape.value(at: index) as! T }
        return try T(from: self)
    }
}

/// The members of an object on the tape. A key given twice means its last value, as in the tree.
struct TapeObjectContainer<Key: CodingKey>: KeyedDecodingContainerProtocol {
    let tape: TapeReference
    let index: Int
    var path: [any CodingKey] { tape.path(to: index) }
    var codingPath: [any CodingKey] { path }

    /// In sorted order, as the tree decoder gives them (its members are a dictionary's, in no order).
    var allKeys: [Key] {
        var keys: [String] = []
        tape.tape.forEachMember(of: index) { name, _ in
            let name = tape.tape.string(at: name)
            if !keys.contains(name) { keys.append(name) }
        }
        return keys.sorted().compactMap { Key(stringValue: $0) }
    }

    /// The node of the value of `key`, if the object has one.
    func valueIndex(_ key: Key) -> Int? { valueIndex(named: key.stringValue) }

    /// The node of the value of the member `name`, if the object has one.
    func valueIndex(named name: String) -> Int? { tape.tape.member(name, of: index) }

    func contains(_ key: Key) -> Bool { valueIndex(key) != nil }

    func member(_ key: Key) throws -> TapeDecoder {
        guard let value = valueIndex(key) else {
            throw PayloadDecodingError(path: path + [key], reason: "missing")
        }
        return TapeDecoder(tape: tape, index: value)
    }

    func decodeNil(forKey key: Key) throws -> Bool {
        guard let value = valueIndex(key) else { return true }
        return tape.tape[value].kind == .null
    }

    func decode(_ type: Bool.Type, forKey key: Key) throws -> Bool { try member(key).decode(type) }
    func decode(_ type: String.Type, forKey key: Key) throws -> String { try member(key).decode(type) }
    func decode(_ type: Double.Type, forKey key: Key) throws -> Double { try member(key).decode(type) }
    func decode(_ type: Float.Type, forKey key: Key) throws -> Float { try member(key).decode(type) }
    func decode(_ type: Int.Type, forKey key: Key) throws -> Int { try member(key).decode(type) }
    func decode(_ type: Int8.Type, forKey key: Key) throws -> Int8 { try member(key).decode(type) }
    func decode(_ type: Int16.Type, forKey key: Key) throws -> Int16 { try member(key).decode(type) }
    func decode(_ type: Int32.Type, forKey key: Key) throws -> Int32 { try member(key).decode(type) }
    func decode(_ type: Int64.Type, forKey key: Key) throws -> Int64 { try member(key).decode(type) }
    func decode(_ type: UInt.Type, forKey key: Key) throws -> UInt { try member(key).decode(type) }
    func decode(_ type: UInt8.Type, forKey key: Key) throws -> UInt8 { try member(key).decode(type) }
    func decode(_ type: UInt16.Type, forKey key: Key) throws -> UInt16 { try member(key).decode(type) }
    func decode(_ type: UInt32.Type, forKey key: Key) throws -> UInt32 { try member(key).decode(type) }
    func decode(_ type: UInt64.Type, forKey key: Key) throws -> UInt64 { try member(key).decode(type) }
    func decode<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T { try member(key).decode(type) }

    func decodeIfPresent<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T? {
        try present(key)?.decode(type)
    }

    /// The decoder of `key`'s value, nil when the object has none or it is null: one look for the
    /// member (the protocol's own `decodeIfPresent` of a scalar looks three times).
    private func present(_ key: Key) -> TapeDecoder? {
        guard let value = valueIndex(key), tape.tape[value].kind != .null else { return nil }
        return TapeDecoder(tape: tape, index: value)
    }

    func decodeIfPresent(_ type: Bool.Type, forKey key: Key) throws -> Bool? {
        try present(key)?.decode(type)
    }
    func decodeIfPresent(_ type: String.Type, forKey key: Key) throws -> String? {
        try present(key)?.decode(type)
    }
    func decodeIfPresent(_ type: Double.Type, forKey key: Key) throws -> Double? {
        try present(key)?.decode(type)
    }
    func decodeIfPresent(_ type: Float.Type, forKey key: Key) throws -> Float? {
        try present(key)?.decode(type)
    }
    func decodeIfPresent(_ type: Int.Type, forKey key: Key) throws -> Int? { try present(key)?.decode(type) }
    func decodeIfPresent(_ type: Int8.Type, forKey key: Key) throws -> Int8? {
        try present(key)?.decode(type)
    }
    func decodeIfPresent(_ type: Int16.Type, forKey key: Key) throws -> Int16? {
        try present(key)?.decode(type)
    }
    func decodeIfPresent(_ type: Int32.Type, forKey key: Key) throws -> Int32? {
        try present(key)?.decode(type)
    }
    func decodeIfPresent(_ type: Int64.Type, forKey key: Key) throws -> Int64? {
        try present(key)?.decode(type)
    }
    func decodeIfPresent(_ type: UInt.Type, forKey key: Key) throws -> UInt? {
        try present(key)?.decode(type)
    }
    func decodeIfPresent(_ type: UInt8.Type, forKey key: Key) throws -> UInt8? {
        try present(key)?.decode(type)
    }
    func decodeIfPresent(_ type: UInt16.Type, forKey key: Key) throws -> UInt16? {
        try present(key)?.decode(type)
    }
    func decodeIfPresent(_ type: UInt32.Type, forKey key: Key) throws -> UInt32? {
        try present(key)?.decode(type)
    }
    func decodeIfPresent(_ type: UInt64.Type, forKey key: Key) throws -> UInt64? {
        try present(key)?.decode(type)
    }

    func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type, forKey key: Key) throws
        -> KeyedDecodingContainer<NestedKey>
    {
        try member(key).container(keyedBy: type)
    }

    func nestedUnkeyedContainer(forKey key: Key) throws -> any UnkeyedDecodingContainer {
        try member(key).unkeyedContainer()
    }

    func superDecoder() throws -> any Decoder {
        let superKey = JSONKey("super")
        if let value = valueIndex(named: "super") { return TapeDecoder(tape: tape, index: value) }
        return ValueDecoder(value: .null, path: path + [superKey])
    }

    func superDecoder(forKey key: Key) throws -> any Decoder {
        guard let value = valueIndex(key) else { return ValueDecoder(value: .null, path: path + [key]) }
        return TapeDecoder(tape: tape, index: value)
    }
}

/// The elements of an array on the tape, one after the other.
struct TapeArrayContainer: UnkeyedDecodingContainer {
    let tape: TapeReference
    let index: Int
    var currentIndex = 0
    /// The node of the next element.
    private var cursor: Int
    var path: [any CodingKey] { tape.path(to: index) }
    var codingPath: [any CodingKey] { path }
    var count: Int? { tape.tape[index].count }
    var isAtEnd: Bool { currentIndex >= tape.tape[index].count }

    init(tape: TapeReference, index: Int) {
        self.tape = tape
        self.index = index
        cursor = index + 1
    }

    mutating func next() throws -> TapeDecoder {
        guard !isAtEnd else {
            throw PayloadDecodingError(
                path: path + [JSONKey(index: currentIndex)],
                reason: "missing (the array has \(tape.tape[index].count))")
        }
        let decoder = TapeDecoder(tape: tape, index: cursor)
        cursor = tape.tape[cursor].next
        currentIndex += 1
        return decoder
    }

    mutating func decodeNil() throws -> Bool {
        guard !isAtEnd, tape.tape[cursor].kind == .null else { return false }
        cursor = tape.tape[cursor].next
        currentIndex += 1
        return true
    }

    mutating func decode<T: Decodable>(_ type: T.Type) throws -> T { try next().decode(type) }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type) throws
        -> KeyedDecodingContainer<NestedKey>
    {
        try next().container(keyedBy: type)
    }

    mutating func nestedUnkeyedContainer() throws -> any UnkeyedDecodingContainer {
        try next().unkeyedContainer()
    }

    mutating func superDecoder() throws -> any Decoder { try next() }
}
