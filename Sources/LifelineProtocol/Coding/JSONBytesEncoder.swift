/// Encodes `Encodable` values straight into JSON text — no ``JSONValue`` tree — with the rules of
/// ``JSONValueEncoder``: the text parses to the value that encoder makes (members in the order the
/// type encodes them), and the same numbers are refused with the same messages.
///
/// Containers are written as the type asks for them, which is in order for every synthesized and
/// ordinary `encode(to:)`. A type that goes back to a container it left (or asks for a super
/// encoder) is encoded through the tree instead, so every type encodes.
package enum JSONBytesEncoder {
    /// The JSON text of `value`.
    /// - Throws: `EncodingError.invalidValue` naming the path of a number JSON cannot hold, or what
    ///   the type's own `encode(to:)` threw.
    package static func encode<T: Encodable>(_ value: T) throws -> [UInt8] {
        if T.self == JSONValue.self { return JSONWriter.encode(value as! JSONValue) }
        let writer = TextWriter()
        do {
            try writer.encode(value, slot: writer.slot(depth: 0), parent: [], key: nil)
            if writer.outOfOrder { throw TextWriter.OutOfOrder() }
            writer.close(to: 0)
            return writer.output
        } catch is TextWriter.OutOfOrder {
            return JSONWriter.encode(try JSONValueEncoder.encode(value))
        }
    }
}

/// The text being written and the containers open in it, innermost last.
final class TextWriter {
    /// A container was used after it was closed: the text cannot be written in one pass.
    struct OutOfOrder: Error {}

    struct Frame {
        var id: Int
        var isObject: Bool
        var count: Int
    }

    /// Where one value goes: the depth of the containers around it, and its number.
    struct Slot {
        let depth: Int
        let id: Int
    }

    var output: [UInt8] = []
    var open: [Frame] = []
    /// Set when the type used a container out of order or asked for a super encoder, even if it
    /// caught what that threw: the text is then not trusted.
    var outOfOrder = false
    private var lastID = 0
    /// The last slot that was written: slots are written in the order they were made.
    private var lastWritten = -1
    /// The slot whose container was opened last, and that container (a second request of it).
    private var lastOpened: (slot: Int, frame: Int)?

    init() { output.reserveCapacity(128) }

    func slot(depth: Int) -> Slot {
        lastID += 1
        return Slot(depth: depth, id: lastID)
    }

    /// Closes the containers deeper than `depth`.
    func close(to depth: Int) {
        while open.count > depth {
            output.append(open.removeLast().isObject ? UInt8(ascii: "}") : UInt8(ascii: "]"))
        }
    }

    /// Makes `slot` the place of the next value: the containers opened inside earlier siblings are closed.
    func begin(_ slot: Slot) throws {
        guard slot.id > lastWritten, open.count >= slot.depth else { throw refuse() }
        close(to: slot.depth)
        lastWritten = slot.id
    }

    /// Opens an object or array in `slot` (or returns the one it already opened); its frame's id.
    func openContainer(in slot: Slot, object: Bool) throws -> Int {
        if let opened = lastOpened, opened.slot == slot.id, let frame = open.last, frame.id == opened.frame,
            frame.isObject == object, open.count == slot.depth + 1
        {
            return frame.id
        }
        try begin(slot)
        lastID += 1
        open.append(Frame(id: lastID, isObject: object, count: 0))
        output.append(object ? UInt8(ascii: "{") : UInt8(ascii: "["))
        lastOpened = (slot.id, lastID)
        return lastID
    }

    /// The slot of the next member or element of the container `frame` at `depth` (its index in
    /// ``open``), after writing the separator and, for an object, the key.
    func child(of frame: Int, at depth: Int, key: String?) throws -> Slot {
        guard open.count > depth, open[depth].id == frame else { throw refuse() }
        close(to: depth + 1)
        if open[depth].count > 0 { output.append(UInt8(ascii: ",")) }
        open[depth].count += 1
        if let key {
            JSONWriter.writeString(key, into: &output)
            output.append(UInt8(ascii: ":"))
        }
        return slot(depth: depth + 1)
    }

    /// Notes that the text cannot be written in one pass, and says so.
    func refuse() -> OutOfOrder {
        outOfOrder = true
        return OutOfOrder()
    }

    func count(of frame: Int, at depth: Int) -> Int {
        open.count > depth && open[depth].id == frame ? open[depth].count : 0
    }

    /// Writes `value` into `slot`; a value that writes nothing is `{}`, as in the tree.
    func encode<T: Encodable>(_ value: T, slot: Slot, parent: [any CodingKey], key: (any CodingKey)?) throws {
        if T.self == JSONValue.self {
            try begin(slot)
            JSONWriter.write(value as! JSONValue, into: &output)
            return
        }
        let before = lastWritten
        try value.encode(to: TextEncoder(writer: self, slot: slot, parent: parent, key: key))
        if lastWritten == before {
            try begin(slot)
            output.append(contentsOf: "{}".utf8)
        }
    }
}

/// The encoder of one value, and its single-value container. Its coding path is put together only
/// when asked for.
struct TextEncoder: Encoder, SingleValueEncodingContainer {
    let writer: TextWriter
    let slot: TextWriter.Slot
    let parent: [any CodingKey]
    let key: (any CodingKey)?
    var path: [any CodingKey] { key.map { parent + [$0] } ?? parent }
    var codingPath: [any CodingKey] { path }

    init(writer: TextWriter, slot: TextWriter.Slot, parent: [any CodingKey], key: (any CodingKey)?) {
        self.writer = writer
        self.slot = slot
        self.parent = parent
        self.key = key
    }
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedEncodingContainer<Key> {
        let frame = try? writer.openContainer(in: slot, object: true)
        return KeyedEncodingContainer(
            TextObjectEncoder<Key>(writer: writer, frame: frame, depth: slot.depth, path: path))
    }

    func unkeyedContainer() -> any UnkeyedEncodingContainer {
        let frame = try? writer.openContainer(in: slot, object: false)
        return TextArrayEncoder(writer: writer, frame: frame, depth: slot.depth, path: path)
    }

    func singleValueContainer() -> any SingleValueEncodingContainer { self }

    private func write(_ text: String) throws {
        try writer.begin(slot)
        writer.output.append(contentsOf: text.utf8)
    }

    func encodeNil() throws { try write("null") }
    func encode(_ value: Bool) throws { try write(value ? "true" : "false") }

    func encode(_ value: String) throws {
        try writer.begin(slot)
        JSONWriter.writeString(value, into: &writer.output)
    }

    func encode(_ value: Double) throws {
        guard value.isFinite else {
            throw EncodingError.invalidValue(
                value, EncodingError.Context(codingPath: path, debugDescription: "JSON has no \(value)"))
        }
        try writer.begin(slot)
        JSONWriter.write(.double(value), into: &writer.output)
    }

    func encode(_ value: Float) throws { try encode(Double(value)) }

    func integer<T: FixedWidthInteger>(_ value: T) throws {
        guard let exact = Int64(exactly: value) else {
            // The tree's encoder says it, with the same path.
            try ValueEncoder(node: EncodedNode(), path: path).integer(value)
            return
        }
        try writer.begin(slot)
        JSONWriter.writeInteger(exact, into: &writer.output)
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

    func encode<T: Encodable>(_ value: T) throws {
        try writer.encode(value, slot: slot, parent: parent, key: key)
    }
}

/// The members of an object being written. `frame` is nil when the object could not be opened in
/// place: every use then throws, and the value is encoded through the tree.
struct TextObjectEncoder<Key: CodingKey>: KeyedEncodingContainerProtocol {
    let writer: TextWriter
    let frame: Int?
    let depth: Int
    let path: [any CodingKey]
    var codingPath: [any CodingKey] { path }

    func member(_ key: Key) throws -> TextEncoder {
        guard let frame else { throw writer.refuse() }
        let slot = try writer.child(of: frame, at: depth, key: key.stringValue)
        return TextEncoder(writer: writer, slot: slot, parent: path, key: key)
    }

    mutating func encodeNil(forKey key: Key) throws { try member(key).encodeNil() }
    mutating func encode(_ value: Bool, forKey key: Key) throws { try member(key).encode(value) }
    mutating func encode(_ value: String, forKey key: Key) throws { try member(key).encode(value) }
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

    mutating func encode<T: Encodable>(_ value: T, forKey key: Key) throws {
        let member = try member(key)
        try writer.encode(value, slot: member.slot, parent: member.parent, key: member.key)
    }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type, forKey key: Key)
        -> KeyedEncodingContainer<NestedKey>
    {
        guard let member = try? member(key) else {
            return KeyedEncodingContainer(
                TextObjectEncoder<NestedKey>(writer: writer, frame: nil, depth: depth, path: path))
        }
        return member.container(keyedBy: keyType)
    }

    mutating func nestedUnkeyedContainer(forKey key: Key) -> any UnkeyedEncodingContainer {
        guard let member = try? member(key) else {
            return TextArrayEncoder(writer: writer, frame: nil, depth: depth, path: path)
        }
        return member.unkeyedContainer()
    }

    mutating func superEncoder() -> any Encoder {
        _ = writer.refuse()
        return FailingEncoder(path: path)
    }

    mutating func superEncoder(forKey key: Key) -> any Encoder {
        _ = writer.refuse()
        return FailingEncoder(path: path + [key])
    }
}

/// The elements of an array being written.
struct TextArrayEncoder: UnkeyedEncodingContainer {
    let writer: TextWriter
    let frame: Int?
    let depth: Int
    let path: [any CodingKey]
    var codingPath: [any CodingKey] { path }
    var count: Int { frame.map { writer.count(of: $0, at: depth) } ?? 0 }

    func next() throws -> TextEncoder {
        guard let frame else { throw writer.refuse() }
        let index = writer.count(of: frame, at: depth)
        let slot = try writer.child(of: frame, at: depth, key: nil)
        return TextEncoder(writer: writer, slot: slot, parent: path, key: JSONKey(index: index))
    }

    mutating func encodeNil() throws { try next().encodeNil() }
    mutating func encode(_ value: Bool) throws { try next().encode(value) }
    mutating func encode(_ value: String) throws { try next().encode(value) }
    mutating func encode(_ value: Double) throws { try next().encode(value) }
    mutating func encode(_ value: Float) throws { try next().encode(value) }
    mutating func encode(_ value: Int) throws { try next().encode(value) }
    mutating func encode(_ value: Int64) throws { try next().encode(value) }

    mutating func encode<T: Encodable>(_ value: T) throws {
        let element = try next()
        try writer.encode(value, slot: element.slot, parent: element.parent, key: element.key)
    }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type)
        -> KeyedEncodingContainer<NestedKey>
    {
        guard let element = try? next() else {
            return KeyedEncodingContainer(
                TextObjectEncoder<NestedKey>(writer: writer, frame: nil, depth: depth, path: path))
        }
        return element.container(keyedBy: keyType)
    }

    mutating func nestedUnkeyedContainer() -> any UnkeyedEncodingContainer {
        guard let element = try? next() else {
            return TextArrayEncoder(writer: writer, frame: nil, depth: depth, path: path)
        }
        return element.unkeyedContainer()
    }

    mutating func superEncoder() -> any Encoder {
        _ = writer.refuse()
        return FailingEncoder(path: path)
    }
}

/// What a super encoder is here: any use sends the value through the tree.
struct FailingEncoder: Encoder {
    let path: [any CodingKey]
    var codingPath: [any CodingKey] { path }
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedEncodingContainer<Key> {
        KeyedEncodingContainer(TextObjectEncoder<Key>(writer: TextWriter(), frame: nil, depth: 0, path: path))
    }

    func unkeyedContainer() -> any UnkeyedEncodingContainer {
        TextArrayEncoder(writer: TextWriter(), frame: nil, depth: 0, path: path)
    }

    func singleValueContainer() -> any SingleValueEncodingContainer {
        TextEncoder(writer: TextWriter(), slot: TextWriter.Slot(depth: -1, id: -1), parent: path, key: nil)
    }
}
