/// A payload, call body or reply that does not decode as the type asked for: which type, where in
/// the value (`items[2].price`) and why.
public struct PayloadDecodingError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The type that was asked for (`Route`).
    public let type: String
    /// Where in the value it went wrong, as a path (`items[2].price`); empty for the value itself.
    public let path: String
    /// What was wrong there: `missing`, `expected a string, found a number (3)`.
    public let reason: String

    public init(type: String, path: String, reason: String) {
        self.type = type
        self.path = path
        self.reason = reason
    }

    init(path: [any CodingKey], reason: String) {
        self.init(type: "", path: Self.text(of: path), reason: reason)
    }

    /// The error a `DecodingError` (thrown by a type's own `init(from:)`) stands for.
    init(_ error: DecodingError, type: String) {
        switch error {
        case .typeMismatch(_, let context), .valueNotFound(_, let context), .dataCorrupted(let context):
            self.init(type: type, path: Self.text(of: context.codingPath), reason: context.debugDescription)
        case .keyNotFound(let key, let context):
            self.init(type: type, path: Self.text(of: context.codingPath + [key]), reason: "missing")
        @unknown default:
            self.init(type: type, path: "", reason: "\(error)")
        }
    }

    /// What a type's `init(from:)` threw, as the error of decoding `type`. Out of line, so that a
    /// decoder's success path does not look up the metadata its casts need.
    @inline(never)
    static func thrown(_ error: any Error, decoding type: Any.Type) -> PayloadDecodingError {
        let name = String(describing: type)
        switch error {
        case let error as PayloadDecodingError: return error.naming(name)
        case let error as DecodingError: return PayloadDecodingError(error, type: name)
        default: return PayloadDecodingError(type: name, path: "", reason: "\(error)")
        }
    }

    /// The same error, saying which type was asked for.
    func naming(_ type: String) -> PayloadDecodingError {
        PayloadDecodingError(type: type, path: path, reason: reason)
    }

    public var description: String {
        path.isEmpty ? "cannot decode \(type): \(reason)" : "cannot decode \(type) at \(path): \(reason)"
    }

    /// `items[2].price` for the keys items, 2, price. A key is an index when its name is its
    /// number: a member whose `CodingKeys` are backed by `Int` is still shown by its name.
    static func text(of path: [any CodingKey]) -> String {
        var text = ""
        for key in path {
            if let index = key.intValue, key.stringValue == String(index) {
                text += "[\(index)]"
            } else {
                text += text.isEmpty ? key.stringValue : "." + key.stringValue
            }
        }
        return text
    }
}
