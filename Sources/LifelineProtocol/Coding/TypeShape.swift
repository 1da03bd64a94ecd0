/// The outline of a `Decodable` type as JSON sees it — `{"url": string, "tags": [string], "note"?:
/// string}` — found by running the type's `init(from:)` over a decoder that records what it asks for.
/// It is what `lifeline describe` shows of a typed method's arguments and reply and of a typed
/// event's fields, so the description cannot drift from the type.
///
/// The recording decoder hands each field a placeholder (`false`, `0`, a string that is also a
/// valid UUID and URL, one array element, nil for optionals); a field whose type refuses every
/// placeholder (an enum with raw values that is not `CaseIterable`, a type that validates its
/// input) ends the outline there, marked `…`.
package indirect enum TypeShape: Sendable, Equatable {
    case string, bool, null
    /// A whole number (`Int`, `UInt8`, …): a JSON number without a fraction.
    case integer
    /// A number that may have a fraction (`Double`, `Float`).
    case number
    /// A `JSONValue`: any JSON.
    case any
    case array(TypeShape)
    /// Members in the order the type decodes them; `optional` ones may be absent.
    case object([Member], complete: Bool)
    /// What the outline could not see.
    case unknown

    package struct Member: Sendable, Equatable {
        package let name: String
        package let shape: TypeShape
        package let optional: Bool

        package init(name: String, shape: TypeShape, optional: Bool) {
            self.name = name
            self.shape = shape
            self.optional = optional
        }
    }

    /// The outline of `type`.
    package static func of<T: Decodable>(_ type: T.Type) -> TypeShape { sample(type).shape }

    /// The outline of `type` and the placeholder value it was read from (nil when the type refused
    /// a placeholder).
    package static func sample<T: Decodable>(_ type: T.Type) -> (shape: TypeShape, value: T?) {
        let node = ShapeNode()
        let value = try? ShapeDecoder(node: node, depth: 0).decode(type)
        return (node.shape, value)
    }

    /// `{"url": string, "note"?: string}`.
    package var text: String {
        switch self {
        case .string: "string"
        case .integer: "integer"
        case .number: "number"
        case .bool: "boolean"
        case .null: "null"
        case .any: "any"
        case .unknown: "…"
        case .array(let element): "[\(element.text)]"
        case .object(let members, let complete):
            "{"
                + (members.map { "\"\($0.name)\"\($0.optional ? "?" : ""): \($0.shape.text)" }
                + (complete ? [] : ["…"])).joined(separator: ", ") + "}"
        }
    }

    /// Each member's type, `?` marking an optional one: what a typed event's description lists.
    package var fields: [String: String] {
        guard case .object(let members, _) = self else { return [:] }
        return Dictionary(
            members.map { ($0.name, $0.shape.text + ($0.optional ? "?" : "")) }, uniquingKeysWith: { $1 })
    }
}

/// What the recording decoder has seen of one value.
final class ShapeNode {
    var kind = Kind.unknown
    var members: [(String, ShapeNode, Bool)] = []
    var element: ShapeNode?
    /// False once a member's decoding threw: the members after it were never asked for.
    var complete = true

    enum Kind { case unknown, string, integer, number, bool, null, any, array, object }

    var shape: TypeShape {
        switch kind {
        case .unknown: .unknown
        case .string: .string
        case .integer: .integer
        case .number: .number
        case .bool: .bool
        case .null: .null
        case .any: .any
        case .array: .array(element?.shape ?? .unknown)
        case .object:
            .object(
                members.map { TypeShape.Member(name: $0.0, shape: $0.1.shape, optional: $0.2) },
                complete: complete)
        }
    }
}

/// The placeholder every string field gets: a valid UUID, and a valid (relative) URL.
private let placeholderText = "00000000-0000-0000-0000-000000000000"

/// The deepest nesting the outline follows (a recursive type through arrays or optionals stops here).
private let deepest = 8

/// A decoder that answers every request with a placeholder and records it.
struct ShapeDecoder: Decoder, SingleValueDecodingContainer {
    let node: ShapeNode
    let depth: Int
    var codingPath: [any CodingKey] { [] }
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedDecodingContainer<Key> {
        node.kind = .object
        return KeyedDecodingContainer(ShapeObject<Key>(node: node, depth: depth))
    }

    func unkeyedContainer() -> any UnkeyedDecodingContainer {
        node.kind = .array
        return ShapeArray(node: node, depth: depth)
    }

    func singleValueContainer() -> any SingleValueDecodingContainer { self }

    func decodeNil() -> Bool { false }

    func decode(_ type: Bool.Type) -> Bool {
        node.kind = .bool
        return false
    }

    func decode(_ type: String.Type) -> String {
        node.kind = .string
        return placeholderText
    }

    func number<T: Numeric>() -> T {
        node.kind = .number
        return 0
    }

    func integer<T: BinaryInteger>() -> T {
        node.kind = .integer
        return 0
    }

    func decode(_ type: Double.Type) -> Double { number() }
    func decode(_ type: Float.Type) -> Float { number() }
    func decode(_ type: Int.Type) -> Int { integer() }
    func decode(_ type: Int8.Type) -> Int8 { integer() }
    func decode(_ type: Int16.Type) -> Int16 { integer() }
    func decode(_ type: Int32.Type) -> Int32 { integer() }
    func decode(_ type: Int64.Type) -> Int64 { integer() }
    func decode(_ type: UInt.Type) -> UInt { integer() }
    func decode(_ type: UInt8.Type) -> UInt8 { integer() }
    func decode(_ type: UInt16.Type) -> UInt16 { integer() }
    func decode(_ type: UInt32.Type) -> UInt32 { integer() }
    func decode(_ type: UInt64.Type) -> UInt64 { integer() }

    func decode<T: Decodable>(_ type: T.Type) throws -> T {
        if T.self == JSONValue.self {
            node.kind = .any
            return JSONValue.null as! T
        }
        // An enum that lists its cases decodes as its first case, after recording its raw value's type.
        if let cases = T.self as? any CaseIterable.Type, let first = Self.firstCase(of: cases) as? T {
            _ = try? T(from: self)
            return first
        }
        return try T(from: self)
    }

    private static func firstCase<C: CaseIterable>(of type: C.Type) -> Any? { type.allCases.first }
}

/// An object's members as the recording decoder sees them.
struct ShapeObject<Key: CodingKey>: KeyedDecodingContainerProtocol {
    let node: ShapeNode
    let depth: Int
    var codingPath: [any CodingKey] { [] }
    var allKeys: [Key] { [] }

    func contains(_ key: Key) -> Bool { true }

    func member(_ key: Key, optional: Bool) -> ShapeDecoder {
        let child = ShapeNode()
        node.members.append((key.stringValue, child, optional))
        return ShapeDecoder(node: child, depth: depth + 1)
    }

    /// Records `key`, and notes when decoding it threw (the members after it are not seen).
    func recorded<T>(_ key: Key, optional: Bool = false, _ body: (ShapeDecoder) throws -> T) throws -> T {
        do {
            return try body(member(key, optional: optional))
        } catch {
            node.complete = false
            throw error
        }
    }

    func decodeNil(forKey key: Key) -> Bool { false }
    func decode(_ type: Bool.Type, forKey key: Key) throws -> Bool { try recorded(key) { $0.decode(type) } }
    func decode(_ type: String.Type, forKey key: Key) throws -> String {
        try recorded(key) { $0.decode(type) }
    }
    func decode(_ type: Double.Type, forKey key: Key) throws -> Double {
        try recorded(key) { $0.decode(type) }
    }
    func decode(_ type: Float.Type, forKey key: Key) throws -> Float { try recorded(key) { $0.decode(type) } }
    func decode(_ type: Int.Type, forKey key: Key) throws -> Int { try recorded(key) { $0.decode(type) } }
    func decode(_ type: Int8.Type, forKey key: Key) throws -> Int8 { try recorded(key) { $0.decode(type) } }
    func decode(_ type: Int16.Type, forKey key: Key) throws -> Int16 { try recorded(key) { $0.decode(type) } }
    func decode(_ type: Int32.Type, forKey key: Key) throws -> Int32 { try recorded(key) { $0.decode(type) } }
    func decode(_ type: Int64.Type, forKey key: Key) throws -> Int64 { try recorded(key) { $0.decode(type) } }
    func decode(_ type: UInt.Type, forKey key: Key) throws -> UInt { try recorded(key) { $0.decode(type) } }
    func decode(_ type: UInt8.Type, forKey key: Key) throws -> UInt8 { try recorded(key) { $0.decode(type) } }
    func decode(_ type: UInt16.Type, forKey key: Key) throws -> UInt16 {
        try recorded(key) { $0.decode(type) }
    }
    func decode(_ type: UInt32.Type, forKey key: Key) throws -> UInt32 {
        try recorded(key) { $0.decode(type) }
    }
    func decode(_ type: UInt64.Type, forKey key: Key) throws -> UInt64 {
        try recorded(key) { $0.decode(type) }
    }
    func decode<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T {
        try recorded(key) { try $0.decode(type) }
    }

    func decodeIfPresent<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T? {
        let child = member(key, optional: true)
        if depth < deepest { _ = try? child.decode(type) }
        return nil
    }

    // The standard library's own overloads for these would ask `contains` and `decode`, hiding that
    // the member is optional.
    func decodeIfPresent(_ type: Bool.Type, forKey key: Key) -> Bool? { absent(key) { $0.decode(type) } }
    func decodeIfPresent(_ type: String.Type, forKey key: Key) -> String? { absent(key) { $0.decode(type) } }
    func decodeIfPresent(_ type: Double.Type, forKey key: Key) -> Double? { absent(key) { $0.decode(type) } }
    func decodeIfPresent(_ type: Float.Type, forKey key: Key) -> Float? { absent(key) { $0.decode(type) } }
    func decodeIfPresent(_ type: Int.Type, forKey key: Key) -> Int? { absent(key) { $0.decode(type) } }
    func decodeIfPresent(_ type: Int8.Type, forKey key: Key) -> Int8? { absent(key) { $0.decode(type) } }
    func decodeIfPresent(_ type: Int16.Type, forKey key: Key) -> Int16? { absent(key) { $0.decode(type) } }
    func decodeIfPresent(_ type: Int32.Type, forKey key: Key) -> Int32? { absent(key) { $0.decode(type) } }
    func decodeIfPresent(_ type: Int64.Type, forKey key: Key) -> Int64? { absent(key) { $0.decode(type) } }
    func decodeIfPresent(_ type: UInt.Type, forKey key: Key) -> UInt? { absent(key) { $0.decode(type) } }
    func decodeIfPresent(_ type: UInt8.Type, forKey key: Key) -> UInt8? { absent(key) { $0.decode(type) } }
    func decodeIfPresent(_ type: UInt16.Type, forKey key: Key) -> UInt16? { absent(key) { $0.decode(type) } }
    func decodeIfPresent(_ type: UInt32.Type, forKey key: Key) -> UInt32? { absent(key) { $0.decode(type) } }
    func decodeIfPresent(_ type: UInt64.Type, forKey key: Key) -> UInt64? { absent(key) { $0.decode(type) } }

    /// Records `key` as optional with what `record` finds, and decodes it as absent.
    private func absent<T>(_ key: Key, _ record: (ShapeDecoder) -> T) -> T? {
        _ = record(member(key, optional: true))
        return nil
    }

    func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type, forKey key: Key)
        -> KeyedDecodingContainer<NestedKey>
    {
        member(key, optional: false).container(keyedBy: type)
    }

    func nestedUnkeyedContainer(forKey key: Key) -> any UnkeyedDecodingContainer {
        member(key, optional: false).unkeyedContainer()
    }

    func superDecoder() -> any Decoder { ShapeDecoder(node: node, depth: depth) }
    func superDecoder(forKey key: Key) -> any Decoder { member(key, optional: false) }
}

/// An array as the recording decoder sees it: one element (none past the deepest nesting).
struct ShapeArray: UnkeyedDecodingContainer {
    let node: ShapeNode
    let depth: Int
    var currentIndex = 0
    var codingPath: [any CodingKey] { [] }
    var count: Int? { depth < deepest ? 1 : 0 }
    var isAtEnd: Bool { currentIndex >= (count ?? 0) }

    mutating func next() -> ShapeDecoder {
        currentIndex += 1
        let child = node.element ?? ShapeNode()
        node.element = child
        return ShapeDecoder(node: child, depth: depth + 1)
    }

    mutating func decodeNil() -> Bool { false }
    mutating func decode<T: Decodable>(_ type: T.Type) throws -> T { try next().decode(type) }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type)
        -> KeyedDecodingContainer<NestedKey>
    {
        next().container(keyedBy: type)
    }

    mutating func nestedUnkeyedContainer() -> any UnkeyedDecodingContainer { next().unkeyedContainer() }
    mutating func superDecoder() -> any Decoder { next() }
}
