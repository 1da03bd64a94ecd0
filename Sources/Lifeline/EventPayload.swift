import LifelineProtocol
import Synchronization

/// An event's JSON object, read lazily: a handler that looks at a field or two gets them without the
/// whole object being built; the whole object is parsed (once) when asked for. The broker checked the
/// payload before it published it.
final class EventPayload: Sendable {
    private let bytes: [UInt8]
    private let parsed: Mutex<JSONValue?>

    init(bytes: [UInt8]) {
        self.bytes = bytes
        parsed = Mutex(nil)
    }

    init(_ value: JSONValue) {
        bytes = []
        parsed = Mutex(value)
    }

    /// The whole object (`{}` for an empty payload, null for text that is not JSON).
    var value: JSONValue {
        parsed.withLock { parsed in
            if let parsed { return parsed }
            let value = bytes.isEmpty ? JSONValue.emptyObject : ((try? JSONParser.parse(bytes)) ?? .null)
            parsed = value
            return value
        }
    }

    /// The payload decoded as `type`: from its text, unless the tree was built already.
    func decode<T: Decodable>(_ type: T.Type) throws(PayloadDecodingError) -> T {
        if bytes.isEmpty || parsed.withLock({ $0 != nil }) {
            return try JSONValueDecoder.decode(type, from: value)
        }
        return try JSONBytesDecoder.decode(type, from: bytes)
    }

    /// The top-level member `name`, if present.
    subscript(name: String) -> JSONValue? {
        if let whole = parsed.withLock({ $0 }) { return whole[name] }
        switch JSONFieldReader.value(of: name, in: bytes) {
        case .none: return nil
        case .some(let value?): return value
        case .some(nil): return value[name]
        }
    }
}
