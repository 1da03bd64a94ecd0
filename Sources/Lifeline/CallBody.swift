import LifelineProtocol
import Synchronization

/// A call's body as it arrived, and its tree: an untyped method's body is parsed by the responder
/// (which must check it anyway); a typed method decodes its arguments straight from the text, and
/// its tree is built only if a handler asks for ``CallRequest/body``.
final class CallBody: Sendable {
    let text: [UInt8]
    private let parsed: Mutex<JSONValue?>

    /// `tree`: the text already parsed, when it was.
    init(text: [UInt8], tree: JSONValue? = nil) {
        self.text = text
        parsed = Mutex(tree)
    }

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
