/// A request whose header is declared once. ``visit(_:)`` names every header field, and that one
/// declaration both reads a received header (``HeaderReader``) and writes one (``HeaderWriter``):
/// adding a field is a stored property and a line in `visit`.
package protocol HeaderMessage: WireRecord {
    /// The command this message is sent as.
    static var command: Command { get }
}

extension HeaderMessage {
    package static var recordName: String { command.rawValue }

    /// The header as JSON text, written without a tree.
    package var header: [UInt8] { bytes }

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
