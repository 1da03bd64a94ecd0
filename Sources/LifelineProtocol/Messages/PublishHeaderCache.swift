/// The last single-event PUBLISH header a reader decoded, and the request it decoded to.
///
/// A publisher sends the same header bytes for every event of a name (`{"event":"x"}`), and the
/// same bytes always decode to the same request but for the payload frame: a repeat skips the JSON
/// parse and the field checks of ``ControlMessage/decode(_:)`` and ``ClientRequest/decode(_:)``,
/// and says only what they would say. Headers of a batch (`count`, `events`) are not remembered:
/// their payload frame is packed.
public struct PublishHeaderCache: Sendable {
    private static let publishBytes = Array(Command.publish.rawValue.utf8)
    private var header: [UInt8] = []
    private var request: PublishRequest?

    public init() {}

    /// The request id and request of `frames` (a message after its routing envelope) when they are
    /// a 5-frame PUBLISH with the remembered header; nil for anything else.
    public func match(_ frames: ArraySlice<[UInt8]>) -> (id: [UInt8], request: PublishRequest)? {
        guard var publish = request, frames.count == 5 else { return nil }
        let start = frames.startIndex
        guard frames[start + 3] == header, frames[start + 1] == Self.publishBytes,
            frames[start] == ProtocolID.controlBytes,
            frames[start + 2].count <= ControlRequest.maximumRequestIDLength
        else { return nil }
        publish.payload = frames[start + 4]
        return (frames[start + 2], publish)
    }

    /// Remembers what `frames` decoded to (`request` read as `publish`), when it is a single-event
    /// PUBLISH.
    public mutating func remember(
        _ frames: ArraySlice<[UInt8]>, request: ControlRequest, publish: PublishRequest
    ) {
        guard request.command == .publish, frames.count >= 4, publish.rest.isEmpty,
            request.header["count"] == nil, request.header["events"] == nil
        else { return }
        header = frames[frames.startIndex + 3]
        self.request = publish
    }
}
