/// Writes a JSON object field by field, straight into bytes, for replies on the hot path. The caller
/// adds keys in sorted order, so the output equals ``JSONWriter``'s for the same object.
package struct JSONObjectWriter {
    public private(set) var bytes: [UInt8]
    private var empty = true

    public init(capacity: Int = 96) {
        bytes = []
        bytes.reserveCapacity(capacity)
        bytes.append(UInt8(ascii: "{"))
    }

    #if DEBUG
        private var lastKey: String?
    #endif

    private mutating func key(_ key: StaticString) {
        #if DEBUG
            assert(lastKey.map { $0 < key.description } ?? true, "'\(key)' written after '\(lastKey ?? "")'")
            lastKey = key.description
        #endif
        if !empty { bytes.append(UInt8(ascii: ",")) }
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
        bytes.append(UInt8(ascii: "}"))
        return bytes
    }
}
