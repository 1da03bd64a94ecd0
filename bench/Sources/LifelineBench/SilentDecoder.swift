/// A decoder that reads nothing: every member is present and zero, empty or false. Decoding a type
/// with it costs what Swift's `Decodable` machinery costs by itself — the keyed container a type's
/// `init(from:)` asks for (its generic metadata, its box) and a call per member — which any decoder
/// pays before it reads a byte: the floor of the typed rows (bench/typed-cpu.sh).
struct SilentDecoder: Decoder {
    var codingPath: [any CodingKey] { [] }
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    func container<Key: CodingKey>(keyedBy type: Key.Type) throws -> KeyedDecodingContainer<Key> {
        KeyedDecodingContainer(Members<Key>())
    }

    func unkeyedContainer() throws -> any UnkeyedDecodingContainer { throw Unsupported() }
    func singleValueContainer() throws -> any SingleValueDecodingContainer { throw Unsupported() }

    struct Unsupported: Error {}

    struct Members<Key: CodingKey>: KeyedDecodingContainerProtocol {
        var codingPath: [any CodingKey] { [] }
        var allKeys: [Key] { [] }
        func contains(_ key: Key) -> Bool { true }
        func decodeNil(forKey key: Key) throws -> Bool { false }
        func decode(_ type: Bool.Type, forKey key: Key) throws -> Bool { false }
        func decode(_ type: String.Type, forKey key: Key) throws -> String { "" }
        func decode(_ type: Int.Type, forKey key: Key) throws -> Int { 0 }
        func decode(_ type: UInt64.Type, forKey key: Key) throws -> UInt64 { 0 }
        func decode<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T { throw Unsupported() }
        func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type, forKey key: Key) throws
            -> KeyedDecodingContainer<NestedKey>
        {
            throw Unsupported()
        }
        func nestedUnkeyedContainer(forKey key: Key) throws -> any UnkeyedDecodingContainer {
            throw Unsupported()
        }
        func superDecoder() throws -> any Decoder { throw Unsupported() }
        func superDecoder(forKey key: Key) throws -> any Decoder { throw Unsupported() }
    }
}
