/// Reads the fields of one request header, each with an error that names the command, the field
/// and what was wrong. The only place that reads a header by key.
struct HeaderFields {
    let what: String
    let document: JSONTape
    let requestID: [UInt8]
    /// The object whose members these are: the document itself, or an object inside it.
    let root: Int

    init(_ request: ControlRequest, what: String? = nil) {
        self.what = what ?? request.command.rawValue
        self.document = request.document
        self.requestID = request.requestID
        self.root = 0
    }

    /// The fields of the JSON object `bytes`.
    /// - Throws: ``ProtocolError`` (400) when `bytes` are not JSON or not an object.
    init(object bytes: [UInt8], what: String) throws(ProtocolError) {
        guard let document = try? JSONTape(bytes) else {
            throw ProtocolError(.badRequest, "\(what) is not JSON")
        }
        guard document[0].kind == .object else {
            throw ProtocolError(.badRequest, "\(what) must be a JSON object")
        }
        self.what = what
        self.document = document
        self.requestID = []
        self.root = 0
    }

    private init(_ document: JSONTape, root: Int, what: String, requestID: [UInt8]) {
        self.what = what
        self.document = document
        self.root = root
        self.requestID = requestID
    }

    /// The fields of the object that is the value of `key`; nil when absent or null.
    /// - Throws: ``ProtocolError`` (400) when the value is not an object.
    func nested(_ key: String) throws(ProtocolError) -> HeaderFields? {
        guard let index = document.member(key, of: root), document[index].kind != .null else { return nil }
        return try nested(at: index, what: "\(what) '\(key)'")
    }

    /// The fields of the object at `index` of the document, called `what` in errors.
    /// - Throws: ``ProtocolError`` (400) when the value there is not an object.
    func nested(at index: Int, what: String) throws(ProtocolError) -> HeaderFields {
        guard document[index].kind == .object else { throw problem("\(what) must be a JSON object") }
        return HeaderFields(document, root: index, what: what, requestID: requestID)
    }

    /// The indexes of the elements of the array that is the value of `key` (empty when absent or
    /// null).
    /// - Throws: ``ProtocolError`` (400) when the value is not an array.
    func elements(_ key: String) throws(ProtocolError) -> [Int] {
        guard let index = document.member(key, of: root), document[index].kind != .null else { return [] }
        guard document[index].kind == .array else { throw problem("\(what) '\(key)' must be an array") }
        return document.children(of: index)
    }

    /// The members of the object that is the value of `key`, as (name, index of the value) (empty
    /// when absent or null).
    /// - Throws: ``ProtocolError`` (400) when the value is not an object.
    func members(_ key: String) throws(ProtocolError) -> [(name: String, index: Int)] {
        guard let index = document.member(key, of: root), document[index].kind != .null else { return [] }
        guard document[index].kind == .object else { throw problem("\(what) '\(key)' must be a JSON object") }
        let children = document.children(of: index)
        return stride(from: 0, to: children.count, by: 2).map {
            (document.string(at: children[$0]), children[$0 + 1])
        }
    }

    init(_ json: JSONValue, what: String, requestID: [UInt8] = []) {
        self.what = what
        // The writer's own output is JSON.
        self.document = try! JSONTape(
            JSONWriter.encode(json.objectValue.map(JSONValue.object) ?? .emptyObject))
        self.requestID = requestID
        self.root = 0
    }

    /// Every field, as a tree (for a message that reads the header whole: REGISTER).
    var object: [String: JSONValue] { document.value(at: root).objectValue ?? [:] }

    func problem(_ message: String) -> ProtocolError {
        ProtocolError(.badRequest, message, requestID: requestID)
    }

    /// The raw value of `key`, nil when absent or JSON null.
    func value(_ key: String) -> JSONValue? {
        guard let index = document.member(key, of: root), document[index].kind != .null else { return nil }
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
