import LifelineProtocol
import Synchronization

/// A call's body as it arrived, parsed into a tree only when a handler asks for ``CallRequest/body``:
/// a typed method decodes its arguments straight from the text. The responder checked it is JSON.
final class CallBody: Sendable {
    let text: [UInt8]
    private let parsed = Mutex<JSONValue?>(nil)

    init(text: [UInt8]) { self.text = text }

    /// The tree (`null` for an empty body).
    var value: JSONValue {
        parsed.withLock { parsed in
            if let parsed { return parsed }
            let value = text.isEmpty ? JSONValue.null : ((try? JSONParser.parse(text)) ?? .null)
            parsed = value
            return value
        }
    }
}
