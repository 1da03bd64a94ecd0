extension JSONValue: Codable {
    /// Any JSON value: what a `JSONValue` field of a `Codable` type takes as it is.
    /// - Throws: `DecodingError.dataCorrupted` when the decoder holds no JSON value.
    public init(from decoder: any Decoder) throws {
        if let decoder = decoder as? ValueDecoder {
            self = decoder.value
            return
        }
        let container = try decoder.singleValueContainer()
        if container.decodeNil() {
            self = .null
        } else if let flag = try? container.decode(Bool.self) {
            self = .bool(flag)
        } else if let number = try? container.decode(Int64.self) {
            self = .int(number)
        } else if let number = try? container.decode(Double.self) {
            self = .double(number)
        } else if let text = try? container.decode(String.self) {
            self = .string(text)
        } else if let elements = try? container.decode([JSONValue].self) {
            self = .array(elements)
        } else if let members = try? container.decode([String: JSONValue].self) {
            self = .object(members)
        } else {
            throw DecodingError.dataCorrupted(
                DecodingError.Context(codingPath: decoder.codingPath, debugDescription: "not a JSON value"))
        }
    }

    /// Writes the value as it is.
    /// - Throws: what the encoder throws (a non-finite number, for one).
    public func encode(to encoder: any Encoder) throws {
        if let encoder = encoder as? ValueEncoder {
            encoder.node.set(self)
            return
        }
        var container = encoder.singleValueContainer()
        switch self {
        case .null: try container.encodeNil()
        case .bool(let flag): try container.encode(flag)
        case .int(let number): try container.encode(number)
        case .double(let number): try container.encode(number)
        case .string(let text): try container.encode(text)
        case .array(let elements): try container.encode(elements)
        case .object(let members): try container.encode(members)
        }
    }
}
