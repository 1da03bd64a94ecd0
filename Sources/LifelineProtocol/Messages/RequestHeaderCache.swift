/// The last PUBLISH header (of a single event) and the last CALL header a reader decoded, and the
/// requests they decoded to.
///
/// A publisher sends the same header bytes for every event of a name (`{"event":"x"}`), a client
/// the same for every call of a method, and the same bytes always decode to the same request but
/// for the payload frame: a repeat skips the JSON parse and the field checks of
/// ``ControlMessage/decode(_:)`` and ``ClientRequest/decode(_:)``, and says only what they would
/// say. Headers of a batch (`count`, `events`) are not remembered: their payload frame is packed.
package struct RequestHeaderCache: Sendable {
    private struct Slot: Sendable {
        let header: [UInt8]
        let request: ClientRequest
    }

    private static let publishBytes = Array(Command.publish.rawValue.utf8)
    private static let callBytes = Array(Command.call.rawValue.utf8)
    private var publish: Slot?
    private var call: Slot?

    /// A cache that remembers nothing yet.
    public init() {}

    /// The request id and request of `frames` (a message after its routing envelope) when they are
    /// a PUBLISH or CALL with the remembered header; nil for anything else.
    public func match(_ frames: ArraySlice<[UInt8]>) -> (id: [UInt8], request: ClientRequest)? {
        guard frames.count == 4 || frames.count == 5 else { return nil }
        let start = frames.startIndex
        let command = frames[start + 1]
        let remembered =
            command == Self.publishBytes ? publish : command == Self.callBytes ? call : nil
        guard let remembered, frames[start + 3] == remembered.header,
            frames[start] == ProtocolID.controlBytes,
            frames[start + 2].count <= ControlRequest.maximumRequestIDLength
        else { return nil }
        let payload = frames.count == 5 ? frames[start + 4] : []
        switch remembered.request {
        case .publish(var publish):
            publish.payload = payload
            return (frames[start + 2], .publish(publish))
        case .call(var call):
            call.body = payload
            return (frames[start + 2], .call(call))
        default: return nil
        }
    }

    /// Remembers what `frames` decoded to (`request`, read as `decoded`) when it is a single-event
    /// PUBLISH or a CALL.
    public mutating func remember(
        _ frames: ArraySlice<[UInt8]>, request: ControlRequest, decoded: ClientRequest
    ) {
        guard frames.count >= 4 else { return }
        let header = frames[frames.startIndex + 3]
        switch decoded {
        case .publish(var publish)
        where publish.rest.isEmpty && request.document.member("count") == nil
            && request.document.member("events") == nil:
            publish.payload = []
            self.publish = Slot(header: header, request: .publish(publish))
        case .call(var call):
            call.body = []
            self.call = Slot(header: header, request: .call(call))
        default: break
        }
    }
}
