/// Checks that bytes are one JSON document without building it (for payloads the broker only relays).
package enum JSONValidator {
    /// The JSON type of the document in `bytes` (`object`, `array`, …), or the parse error.
    /// - Throws: ``JSONParseError`` with the offset where the text stopped being JSON and why.
    public static func topLevelType(of bytes: [UInt8]) throws(JSONParseError) -> String {
        let kind = try bytes.withUnsafeBufferPointer { (buffer) throws(JSONParseError) -> JSONTape.Kind in
            var scanner = JSONScanner(buffer, record: NoRecord())
            return try scanner.document().1
        }
        switch kind {
        case .object: return "object"
        case .array: return "array"
        case .string, .escapedString: return "string"
        case .number: return "number"
        case .true, .false: return "boolean"
        case .null: return "null"
        }
    }

    /// Keeps nothing: the scan only judges the text.
    private struct NoRecord: JSONScanRecord {
        func scalar(_ kind: JSONTape.Kind, start: Int, end: Int) {}
        func open(_ kind: JSONTape.Kind, start: Int) {}
        func add(_ value: Void, key: Void?, to container: inout Void) {}
        func close(_ container: Void, end: Int, count: Int) {}
    }
}
