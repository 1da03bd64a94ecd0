/// Decodes `Decodable` values from a ``JSONValue`` (the tree the project's parser builds), reporting
/// where and why a value does not fit (``PayloadDecodingError``). Numbers follow JSON: an integer
/// type takes an integral number in its range, `Double` and `Float` take any number; a missing key
/// (or null) decodes as nil for optionals and is an error otherwise; `JSONValue` members are taken as
/// they are.
package enum JSONValueDecoder {
    /// Decodes `type` from `value`.
    /// - Throws: ``PayloadDecodingError`` naming the type, the coding path and what was wrong.
    package static func decode<T: Decodable>(_ type: T.Type, from value: JSONValue)
        throws(PayloadDecodingError)
        -> T
    {
        if T.self == JSONValue.self { return value as! T }
        do {
            return try T(from: ValueDecoder(value: value, path: []))
        } catch {
            throw .thrown(error, decoding: T.self)
        }
    }

    /// Decodes `type` from JSON text.
    /// - Throws: ``PayloadDecodingError`` when the bytes are not JSON or do not fit `type`.
    package static func decode<T: Decodable>(_ type: T.Type, from bytes: [UInt8]) throws(PayloadDecodingError)
        -> T
    {
        let value: JSONValue
        do {
            value = try JSONParser.parse(bytes)
        } catch {
            throw PayloadDecodingError(
                type: String(describing: T.self), path: "", reason: "not JSON: \(error)")
        }
        return try decode(type, from: value)
    }
}

/// The decoder of one value at one coding path.
struct ValueDecoder: Decoder {
    let value: JSONValue
    let path: [any CodingKey]
    var codingPath: [any CodingKey] { path }
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    func mismatch(_ expected: String) -> PayloadDecodingError {
        PayloadDecodingError(path: path, reason: "expected \(expected), found \(value.typeDescription)")
    }

    func container<Key: CodingKey>(keyedBy type: Key.Type) throws -> KeyedDecodingContainer<Key> {
        guard case .object(let members) = value else { throw mismatch("an object") }
        return KeyedDecodingContainer(ObjectContainer<Key>(members: members, path: path))
    }

    func unkeyedContainer() throws -> any UnkeyedDecodingContainer {
        guard case .array(let elements) = value else { throw mismatch("an array") }
        return ArrayContainer(elements: elements, path: path)
    }

    func singleValueContainer() throws -> any SingleValueDecodingContainer { self }
}

extension ValueDecoder: SingleValueDecodingContainer {
    func decodeNil() -> Bool { value == .null }

    func decode(_ type: Bool.Type) throws -> Bool {
        guard case .bool(let flag) = value else { throw mismatch("a boolean") }
        return flag
    }

    func decode(_ type: String.Type) throws -> String {
        guard case .string(let text) = value else { throw mismatch("a string") }
        return text
    }

    func decode(_ type: Double.Type) throws -> Double {
        guard let number = value.doubleValue else { throw mismatch("a number") }
        return number
    }

    func decode(_ type: Float.Type) throws -> Float {
        guard let number = value.doubleValue else { throw mismatch("a number") }
        return Float(number)
    }

    func integer<T: FixedWidthInteger>(_ type: T.Type) throws -> T {
        switch value {
        case .int(let number):
            guard let exact = T(exactly: number) else {
                throw PayloadDecodingError(path: path, reason: "\(number) does not fit in \(T.self)")
            }
            return exact
        case .double(let number):
            guard let exact = T(exactly: number) else {
                throw PayloadDecodingError(
                    path: path, reason: "expected an integer (\(T.self)), found \(number)")
            }
            return exact
        default:
            throw mismatch("an integer")
        }
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
        if T.self == JSONValue.self { return value as! T }
        return try T(from: self)
    }
}

/// The members of an object being decoded.
struct ObjectContainer<Key: CodingKey>: KeyedDecodingContainerProtocol {
    let members: [String: JSONValue]
    let path: [any CodingKey]
    var codingPath: [any CodingKey] { path }
    /// In sorted order, as the tape decoder gives them: a dictionary with several bad entries is
    /// refused naming the same one every time, in both decoders.
    var allKeys: [Key] { members.keys.sorted().compactMap { Key(stringValue: $0) } }

    func contains(_ key: Key) -> Bool { members[key.stringValue] != nil }

    func member(_ key: Key) throws -> ValueDecoder {
        guard let value = members[key.stringValue] else {
            throw PayloadDecodingError(path: path + [key], reason: "missing")
        }
        return ValueDecoder(value: value, path: path + [key])
    }

    func decodeNil(forKey key: Key) throws -> Bool { (members[key.stringValue] ?? .null) == .null }
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
        guard let value = members[key.stringValue], value != .null else { return nil }
        return try ValueDecoder(value: value, path: path + [key]).decode(type)
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
        ValueDecoder(value: members["super"] ?? .null, path: path + [JSONKey("super")])
    }

    func superDecoder(forKey key: Key) throws -> any Decoder {
        ValueDecoder(value: members[key.stringValue] ?? .null, path: path + [key])
    }
}

/// The elements of an array being decoded, one after the other.
struct ArrayContainer: UnkeyedDecodingContainer {
    let elements: [JSONValue]
    let path: [any CodingKey]
    var currentIndex = 0
    var codingPath: [any CodingKey] { path }
    var count: Int? { elements.count }
    var isAtEnd: Bool { currentIndex >= elements.count }

    mutating func next() throws -> ValueDecoder {
        let key = JSONKey(index: currentIndex)
        guard !isAtEnd else {
            throw PayloadDecodingError(
                path: path + [key], reason: "missing (the array has \(elements.count))")
        }
        defer { currentIndex += 1 }
        return ValueDecoder(value: elements[currentIndex], path: path + [key])
    }

    mutating func decodeNil() throws -> Bool {
        guard !isAtEnd, elements[currentIndex] == .null else { return false }
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

/// A coding key made at run time: an object member or an array index.
struct JSONKey: CodingKey {
    let stringValue: String
    let intValue: Int?

    init(_ string: String) {
        stringValue = string
        intValue = nil
    }

    /// An object's member as a dictionary's key names it: a name that is a number also has it as
    /// its `intValue`.
    init(member name: String) {
        stringValue = name
        intValue = Int(name)
    }

    init(index: Int) {
        stringValue = "\(index)"
        intValue = index
    }

    init?(stringValue: String) { self.init(stringValue) }
    init?(intValue: Int) { self.init(index: intValue) }
}

extension JSONValue {
    /// The type and a short view of the value, for a decoding error: `a string ("abc")`.
    var typeDescription: String {
        switch self {
        case .null: "null"
        case .bool(let flag): "a boolean (\(flag))"
        case .int(let number): "a number (\(number))"
        case .double(let number): "a number (\(number))"
        case .string(let text): "a string (\"\(text.count > 40 ? text.prefix(40) + "…" : text)\")"
        case .array(let elements): "an array of \(elements.count)"
        case .object: "an object"
        }
    }
}
