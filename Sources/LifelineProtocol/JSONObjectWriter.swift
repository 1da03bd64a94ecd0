/// Writes a JSON object field by field, straight into bytes, for replies on the hot path. The caller
/// adds keys in sorted order, so the output equals ``JSONWriter``'s for the same object; or, made
/// `sortingKeys`, in any order, and the members are put in order when the object is finished.
package struct JSONObjectWriter {
    public private(set) var bytes: [UInt8]
    private var empty = true
    /// Where each member's text starts, by key, when the members are put in order at the end.
    private var members: [(key: String, start: Int)]?

    public init(capacity: Int = 96, sortingKeys: Bool = false) {
        bytes = []
        bytes.reserveCapacity(capacity)
        bytes.append(UInt8(ascii: "{"))
        if sortingKeys { members = [] }
    }

    #if DEBUG
        private var lastKey: String?
    #endif

    private mutating func key(_ key: StaticString) {
        if members != nil {
            members?.append((key.description, bytes.count))
        } else {
            #if DEBUG
                assert(
                    lastKey.map { $0 < key.description } ?? true, "'\(key)' written after '\(lastKey ?? "")'")
                lastKey = key.description
            #endif
            if !empty { bytes.append(UInt8(ascii: ",")) }
        }
        empty = false
        bytes.append(UInt8(ascii: "\""))
        bytes.append(contentsOf: UnsafeBufferPointer(start: key.utf8Start, count: key.utf8CodeUnitCount))
        bytes.append(UInt8(ascii: "\""))
        bytes.append(UInt8(ascii: ":"))
    }

    /// Adds the member `name` with an integer.
    public mutating func add(_ name: StaticString, _ value: Int64) {
        key(name)
        JSONWriter.writeInteger(value, into: &bytes)
    }

    /// Adds the member `name` with a string, escaped.
    public mutating func add(_ name: StaticString, _ value: String) {
        key(name)
        JSONWriter.writeString(value, into: &bytes)
    }

    /// Adds the member `name` with `true` or `false`.
    public mutating func add(_ name: StaticString, _ value: Bool) {
        key(name)
        bytes.append(contentsOf: value ? Self.trueBytes : Self.falseBytes)
    }

    private static let trueBytes = Array("true".utf8)
    private static let falseBytes = Array("false".utf8)

    /// Adds the member `name` with any JSON value.
    public mutating func add(_ name: StaticString, _ value: JSONValue) {
        key(name)
        bytes.append(contentsOf: JSONWriter.encode(value))
    }

    /// Adds the member `name` with `text`, JSON its writer checked (a typed value's encoding).
    public mutating func add(_ name: StaticString, text: [UInt8]) {
        key(name)
        bytes.append(contentsOf: text)
    }

    /// The finished object.
    public mutating func finish() -> [UInt8] {
        guard let members else {
            bytes.append(UInt8(ascii: "}"))
            return bytes
        }
        let ends = members.dropFirst().map(\.start) + [bytes.count]
        let spans = zip(members, ends).map { (key: $0.key, range: $0.start..<$1) }.sorted { $0.key < $1.key }
        var sorted: [UInt8] = [UInt8(ascii: "{")]
        sorted.reserveCapacity(bytes.count + spans.count + 1)
        for (index, span) in spans.enumerated() {
            if index > 0 { sorted.append(UInt8(ascii: ",")) }
            sorted.append(contentsOf: bytes[span.range])
        }
        sorted.append(UInt8(ascii: "}"))
        return sorted
    }
}
