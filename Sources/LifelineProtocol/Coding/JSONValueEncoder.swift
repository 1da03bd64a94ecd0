/// Encodes `Encodable` values into a ``JSONValue`` (which the project's writer turns into bytes).
/// Optionals that are nil are left out of their object; integers stay exact; `JSONValue` members
/// are taken as they are. A number JSON cannot hold (NaN, infinity, an unsigned value above
/// `Int64.max`) is refused, naming its path.
package enum JSONValueEncoder {
    /// The JSON value of `value`.
    /// - Throws: `EncodingError.invalidValue` naming the path of a number JSON cannot hold, or what
    ///   the type's own `encode(to:)` threw.
    package static func encode<T: Encodable>(_ value: T) throws -> JSONValue {
        if T.self == JSONValue.self { return value as! JSONValue }
        let root = EncodedNode()
        try root.encode(value, path: [])
        return root.value
    }
}

/// One value being encoded: unset, a scalar, or a container whose children are filled in later.
final class EncodedNode {
    private enum Content {
        case unset
        case scalar(JSONValue)
        case object([(String, EncodedNode)])
        case array([EncodedNode])
    }

    private var content = Content.unset

    var value: JSONValue {
        switch content {
        case .unset: .emptyObject
        case .scalar(let value): value
        case .object(let members):
            .object(Dictionary(members.map { ($0.0, $0.1.value) }, uniquingKeysWith: { _, last in last }))
        case .array(let elements): .array(elements.map(\.value))
        }
    }

    func set(_ value: JSONValue) { content = .scalar(value) }

    /// A new member `key` of this object (made an object if it was not one).
    func member(_ key: String) -> EncodedNode {
        let child = EncodedNode()
        if case .object(var members) = content {
            content = .unset
            members.append((key, child))
            content = .object(members)
        } else {
            content = .object([(key, child)])
        }
        return child
    }

    func makeObject() {
        if case .object = content { return }
        content = .object([])
    }

    func makeArray() {
        if case .array = content { return }
        content = .array([])
    }

    /// A new last element of this array.
    func append() -> EncodedNode {
        let child = EncodedNode()
        if case .array(var elements) = content {
            content = .unset
            elements.append(child)
            content = .array(elements)
        } else {
            content = .array([child])
        }
        return child
    }

    var count: Int {
        switch content {
        case .array(let elements): elements.count
        case .object(let members): members.count
        default: 0
        }
    }

    func encode<T: Encodable>(_ value: T, path: [any CodingKey]) throws {
        if T.self == JSONValue.self {
            set(value as! JSONValue)
        } else {
            try value.encode(to: ValueEncoder(node: self, path: path))
        }
    }
}

/// The encoder of one value at one coding path.
struct ValueEncoder: Encoder, SingleValueEncodingContainer {
    let node: EncodedNode
    let path: [any CodingKey]
    var codingPath: [any CodingKey] { path }
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedEncodingContainer<Key> {
        node.makeObject()
        return KeyedEncodingContainer(ObjectEncoder<Key>(node: node, path: path))
    }

    func unkeyedContainer() -> any UnkeyedEncodingContainer {
        node.makeArray()
        return ArrayEncoder(node: node, path: path)
    }

    func singleValueContainer() -> any SingleValueEncodingContainer { self }

    func encodeNil() { node.set(.null) }
    func encode(_ value: Bool) { node.set(.bool(value)) }
    func encode(_ value: String) { node.set(.string(value)) }

    func encode(_ value: Double) throws {
        guard value.isFinite else {
            throw EncodingError.invalidValue(
                value, EncodingError.Context(codingPath: path, debugDescription: "JSON has no \(value)"))
        }
        node.set(.double(value))
    }

    func encode(_ value: Float) throws { try encode(Double(value)) }

    func integer<T: FixedWidthInteger>(_ value: T) throws {
        guard let exact = Int64(exactly: value) else {
            let field = path.map { $0.intValue.map { "[\($0)]" } ?? ".\($0.stringValue)" }.joined()
            throw EncodingError.invalidValue(
                value,
                EncodingError.Context(
                    codingPath: path,
                    debugDescription:
                        "\(field.isEmpty ? "the value" : "field '\(field.drop { $0 == "." })'") is \(value), beyond a JSON integer of the wire (-2^63 ... 2^63-1); send it as a string"
                ))
        }
        node.set(.int(exact))
    }

    func encode(_ value: Int) throws { try integer(value) }
    func encode(_ value: Int8) throws { try integer(value) }
    func encode(_ value: Int16) throws { try integer(value) }
    func encode(_ value: Int32) throws { try integer(value) }
    func encode(_ value: Int64) throws { try integer(value) }
    func encode(_ value: UInt) throws { try integer(value) }
    func encode(_ value: UInt8) throws { try integer(value) }
    func encode(_ value: UInt16) throws { try integer(value) }
    func encode(_ value: UInt32) throws { try integer(value) }
    func encode(_ value: UInt64) throws { try integer(value) }

    func encode<T: Encodable>(_ value: T) throws { try node.encode(value, path: path) }
}

/// The members of an object being encoded.
struct ObjectEncoder<Key: CodingKey>: KeyedEncodingContainerProtocol {
    let node: EncodedNode
    let path: [any CodingKey]
    var codingPath: [any CodingKey] { path }

    func member(_ key: Key) -> ValueEncoder {
        ValueEncoder(node: node.member(key.stringValue), path: path + [key])
    }

    mutating func encodeNil(forKey key: Key) { member(key).encodeNil() }
    mutating func encode(_ value: Bool, forKey key: Key) { member(key).encode(value) }
    mutating func encode(_ value: String, forKey key: Key) { member(key).encode(value) }
    mutating func encode(_ value: Double, forKey key: Key) throws { try member(key).encode(value) }
    mutating func encode(_ value: Float, forKey key: Key) throws { try member(key).encode(value) }
    mutating func encode(_ value: Int, forKey key: Key) throws { try member(key).encode(value) }
    mutating func encode(_ value: Int8, forKey key: Key) throws { try member(key).encode(value) }
    mutating func encode(_ value: Int16, forKey key: Key) throws { try member(key).encode(value) }
    mutating func encode(_ value: Int32, forKey key: Key) throws { try member(key).encode(value) }
    mutating func encode(_ value: Int64, forKey key: Key) throws { try member(key).encode(value) }
    mutating func encode(_ value: UInt, forKey key: Key) throws { try member(key).encode(value) }
    mutating func encode(_ value: UInt8, forKey key: Key) throws { try member(key).encode(value) }
    mutating func encode(_ value: UInt16, forKey key: Key) throws { try member(key).encode(value) }
    mutating func encode(_ value: UInt32, forKey key: Key) throws { try member(key).encode(value) }
    mutating func encode(_ value: UInt64, forKey key: Key) throws { try member(key).encode(value) }
    mutating func encode<T: Encodable>(_ value: T, forKey key: Key) throws { try member(key).encode(value) }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type, forKey key: Key)
        -> KeyedEncodingContainer<NestedKey>
    {
        member(key).container(keyedBy: keyType)
    }

    mutating func nestedUnkeyedContainer(forKey key: Key) -> any UnkeyedEncodingContainer {
        member(key).unkeyedContainer()
    }

    mutating func superEncoder() -> any Encoder {
        ValueEncoder(node: node.member("super"), path: path + [JSONKey("super")])
    }

    mutating func superEncoder(forKey key: Key) -> any Encoder { member(key) }
}

/// The elements of an array being encoded.
struct ArrayEncoder: UnkeyedEncodingContainer {
    let node: EncodedNode
    let path: [any CodingKey]
    var codingPath: [any CodingKey] { path }
    var count: Int { node.count }

    func next() -> ValueEncoder {
        let index = node.count
        return ValueEncoder(node: node.append(), path: path + [JSONKey(index: index)])
    }

    mutating func encodeNil() { next().encodeNil() }
    mutating func encode(_ value: Bool) { next().encode(value) }
    mutating func encode(_ value: String) { next().encode(value) }
    mutating func encode(_ value: Double) throws { try next().encode(value) }
    mutating func encode(_ value: Float) throws { try next().encode(value) }
    mutating func encode(_ value: Int) throws { try next().encode(value) }
    mutating func encode(_ value: Int64) throws { try next().encode(value) }
    mutating func encode<T: Encodable>(_ value: T) throws { try next().encode(value) }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type)
        -> KeyedEncodingContainer<NestedKey>
    {
        next().container(keyedBy: keyType)
    }

    mutating func nestedUnkeyedContainer() -> any UnkeyedEncodingContainer { next().unkeyedContainer() }

    mutating func superEncoder() -> any Encoder { next() }
}
