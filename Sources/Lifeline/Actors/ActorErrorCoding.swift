import LifelineProtocol

/// How an error thrown by a hosted actor's distributed func crosses the wire, and how the caller
/// gets it back. The reply is status 500 with `{"error": message, "type": "Module.Type"}`; an error
/// that is `Encodable` adds its JSON form (`"value"`) and its Swift type's mangled name
/// (`"swiftType"`), so a caller whose program has that type (it imports the protocol's module)
/// rethrows it as that type. A ``ServiceError`` keeps its own status and body.
enum ActorErrorCoding {
    /// The answer for `error`, thrown by `function`.
    static func reply(for error: any Error, from function: DistributedFunction) -> ServiceError {
        if let error = error as? ServiceError { return error }
        var details: [String: JSONValue] = ["type": .string(String(reflecting: type(of: error)))]
        if let encodable = error as? any Encodable, let value = try? JSONValueEncoder.encode(encodable) {
            details["value"] = value
            details["swiftType"] = .string(_mangledTypeName(type(of: error)) ?? "")
        }
        return ServiceError(.internalError, "\(error)", details: details)
    }

    /// The error a failed remote call stands for: the actor's own error as its type when the body
    /// names one this program has and its value decodes; else `error` itself.
    static func rethrown(_ error: LifelineError) -> any Error {
        guard case .string(let name)? = error.body["swiftType"], let value = error.body["value"],
            let type = _typeByName(name) as? any (Error & Decodable).Type
        else { return error }
        return decode(type, from: value) ?? error
    }

    @inline(never)
    private static func decode<E: Error & Decodable>(_ type: E.Type, from value: JSONValue) -> (any Error)? {
        try? JSONValueDecoder.decode(type, from: value)
    }
}
