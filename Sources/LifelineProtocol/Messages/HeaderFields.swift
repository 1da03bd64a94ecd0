/// Reads the fields of one request header, each with an error that names the command, the field
/// and what was wrong. The only place that reads a header by key.
struct HeaderFields {
    let what: String
    let document: JSONTape
    let requestID: [UInt8]

    init(_ request: ControlRequest, what: String? = nil) {
        self.what = what ?? request.command.rawValue
        self.document = request.document
        self.requestID = request.requestID
    }

    init(_ json: JSONValue, what: String, requestID: [UInt8] = []) {
        self.what = what
        // The writer's own output is JSON.
        self.document = try! JSONTape(
            JSONWriter.encode(json.objectValue.map(JSONValue.object) ?? .emptyObject))
        self.requestID = requestID
    }

    /// Every field, as a tree (for a message that reads the header whole: REGISTER).
    var object: [String: JSONValue] { document.value(at: 0).objectValue ?? [:] }

    func problem(_ message: String) -> ProtocolError {
        ProtocolError(.badRequest, message, requestID: requestID)
    }

    /// The raw value of `key`, nil when absent or JSON null.
    func value(_ key: String) -> JSONValue? {
        guard let index = document.member(key), document[index].kind != .null else { return nil }
        return document.value(at: index)
    }

    func string(_ key: String) throws(ProtocolError) -> String {
        guard let text = value(key)?.stringValue else { throw problem("\(what) needs a string '\(key)'") }
        return text
    }

    func optionalString(_ key: String) throws(ProtocolError) -> String? {
        guard let value = value(key) else { return nil }
        guard let text = value.stringValue else {
            throw problem("\(what) '\(key)' must be a string, not \(value.typeName)")
        }
        return text
    }

    func optionalBool(_ key: String) throws(ProtocolError) -> Bool? {
        guard let value = value(key) else { return nil }
        guard let flag = value.boolValue else {
            throw problem("\(what) '\(key)' must be true or false, not \(value.typeName)")
        }
        return flag
    }

    func bool(_ key: String, default fallback: Bool) throws(ProtocolError) -> Bool {
        try optionalBool(key) ?? fallback
    }

    func optionalInteger(_ key: String, in range: ClosedRange<Int>) throws(ProtocolError) -> Int? {
        guard let value = value(key) else { return nil }
        guard let number = value.intValue, range.contains(Int(number)) else {
            throw problem(
                "\(what) \(key) must be an integer within \(range.lowerBound)...\(range.upperBound)")
        }
        return Int(number)
    }

    func integer(_ key: String, in range: ClosedRange<Int>) throws(ProtocolError) -> Int {
        guard let number = try optionalInteger(key, in: range) else {
            throw problem("\(what) needs an integer '\(key)'")
        }
        return number
    }

    /// An unsigned 64-bit field (epochs, sequences).
    func unsigned(_ key: String) throws(ProtocolError) -> UInt64 {
        guard let number = value(key)?.intValue, number >= 0 else {
            throw problem("\(what) needs a non-negative integer '\(key)'")
        }
        return UInt64(number)
    }

    func optionalUnsigned(_ key: String) throws(ProtocolError) -> UInt64? {
        value(key) == nil ? nil : try unsigned(key)
    }

    func optionalObject(_ key: String) throws(ProtocolError) -> JSONValue? {
        guard let value = value(key) else { return nil }
        guard case .object = value else { throw problem("\(what) '\(key)' must be a JSON object") }
        return value
    }

    func strings(_ key: String) throws(ProtocolError) -> [String] {
        guard let value = value(key) else { return [] }
        guard let items = value.arrayValue else {
            throw problem("\(what) '\(key)' must be an array of strings")
        }
        var result: [String] = []
        for item in items {
            guard let text = item.stringValue else {
                throw problem("\(what) '\(key)' must be an array of strings")
            }
            result.append(text)
        }
        return result
    }
}

extension JSONValue {
    /// Parses an optional payload frame: nil or empty is `fallback`.
    static func payload(_ bytes: [UInt8]?, fallback: JSONValue) throws(JSONParseError) -> JSONValue {
        guard let bytes, !bytes.isEmpty else { return fallback }
        return try JSONParser.parse(bytes)
    }
}
