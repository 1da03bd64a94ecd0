/// A request whose header is declared once. ``visit(_:)`` names every header field, and that one
/// declaration both reads a received header (``HeaderReader``) and writes one (``HeaderWriter``):
/// adding a field is a stored property and a line in `visit`.
package protocol HeaderMessage: Sendable {
    /// The command this message is sent as.
    static var command: Command { get }
    /// The message before any field is read: every field at the value its absence means.
    static var blank: Self { get }
    /// Names each header field, in alphabetical order (the order a writer writes them).
    mutating func visit<Visitor: HeaderVisitor>(_ visitor: inout Visitor) throws(Visitor.Failure)
}

extension HeaderMessage {
    /// Reads the message from a received header.
    /// - Throws: ``ProtocolError`` (400) naming the command, the field and what was wrong.
    init(_ fields: HeaderFields) throws(ProtocolError) {
        var reader = HeaderReader(fields)
        var message = Self.blank
        try message.visit(&reader)
        self = message
    }

    /// The header as JSON text, written without a tree.
    package var header: [UInt8] {
        var writer = HeaderWriter()
        var copy = self
        copy.visit(&writer)
        return writer.finish()
    }

    /// The message with request id `id` and `payload` (none when nil): the frames a peer sends.
    package func frames(id: [UInt8], payload: [UInt8]? = nil) -> [[UInt8]] {
        let head = [ProtocolID.controlBytes, Self.command.bytes, id, header]
        return payload.map { head + [$0] } ?? head
    }

    /// The message as a parsed request (its header as a tree: for tests and logs, not for sending).
    package func controlRequest(id: [UInt8], payload: [UInt8]? = nil) -> ControlRequest {
        ControlRequest(
            Self.command, requestID: id, header: (try? JSONParser.parse(header)) ?? .emptyObject,
            payload: payload)
    }
}
