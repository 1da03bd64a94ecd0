/// A JSON object of the protocol declared once — a reply, or a record inside one. ``visit(_:)``
/// names every field, and that one declaration both reads the object (``HeaderReader``) and writes
/// it (``HeaderWriter``): adding a field is a stored property and a line in `visit`.
package protocol WireRecord: Sendable {
    /// The record before any field is read: every field at the value its absence means.
    static var blank: Self { get }
    /// What errors call it ("the HELLO reply").
    static var recordName: String { get }
    /// Names each field, in alphabetical order (the order a writer writes them) unless
    /// ``fieldsInOrder`` says otherwise.
    mutating func visit<Visitor: HeaderVisitor>(_ visitor: inout Visitor) throws(Visitor.Failure)
    /// False for a record whose `visit` names its fields out of order (one that includes another's
    /// fields): its writer puts them in order at the end.
    static var fieldsInOrder: Bool { get }
}

extension WireRecord {
    package static var fieldsInOrder: Bool { true }

    /// Reads the record from its JSON text.
    /// - Throws: ``ProtocolError`` (400) naming the record, the field and what was wrong.
    package init(bytes: [UInt8]) throws(ProtocolError) {
        try self.init(HeaderFields(object: bytes, what: Self.recordName))
    }

    /// Reads the record from a tree (a member of a reply read whole, a test's value).
    /// - Throws: ``ProtocolError`` (400) naming the record, the field and what was wrong.
    package init(json: JSONValue) throws(ProtocolError) {
        guard case .object = json else {
            throw ProtocolError(.badRequest, "\(Self.recordName) must be a JSON object")
        }
        try self.init(HeaderFields(json, what: Self.recordName))
    }

    init(_ fields: HeaderFields) throws(ProtocolError) {
        var reader = HeaderReader(fields)
        var record = Self.blank
        try record.visit(&reader)
        self = record
    }

    /// The record as JSON text, written without a tree.
    package var bytes: [UInt8] {
        var writer = HeaderWriter(sortingKeys: !Self.fieldsInOrder)
        var copy = self
        copy.visit(&writer)
        return writer.finish()
    }

    /// The record as a tree (for replies composed of several, and for `--json` output).
    package var json: JSONValue {
        // The writer's own output is JSON.
        try! JSONParser.parse(bytes)
    }
}
