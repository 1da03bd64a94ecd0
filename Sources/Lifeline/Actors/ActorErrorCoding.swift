import LifelineProtocol

/// How an error thrown by a hosted actor's distributed func crosses the wire, and how the caller
/// gets it back. The reply is status 500 (or the error's own, ``StatusReportingError``) with
/// `{"error": message, "type": "Module.Type"}`; an error that is `Encodable` adds its JSON form
/// (`"value"`, written straight from the error and decoded straight into it: no tree on either side)
/// and its Swift type's mangled name (`"swiftType"`), so a caller that allows that type
/// (``LifelineActorSystem/registerErrors(_:)``) rethrows it as that type. A ``ServiceError`` keeps its own status and body.
///
/// The name only selects among the types the caller allowed: a remote side cannot make the caller
/// instantiate any other type (the runtime's `_typeByName` is never asked).
enum ActorErrorCoding {
    /// The answer for `error`, thrown by `function`.
    static func reply(for error: any Error, from function: DistributedFunction) -> ServiceError {
        if let error = error as? ServiceError { return error }
        let errorType = type(of: error)
        let fullName = String(reflecting: errorType)
        // A private or local type's full name holds an address: the plain name says enough.
        let name = fullName.contains("(unknown context at") ? String(describing: errorType) : fullName
        var details: [String: JSONValue] = ["type": .string(name)]
        var value: [UInt8]?
        if let encodable = error as? any Encodable, let text = try? JSONBytesEncoder.encode(encodable),
            let mangled = _mangledTypeName(errorType)
        {
            value = text
            details["swiftType"] = .string(mangled)
        }
        var status = Status.internalError
        if let chosen = (error as? any StatusReportingError)?.status, (400...599).contains(chosen.rawValue) {
            status = chosen
        }
        var reply = ServiceError(status, "\(error)", details: details)
        if let value { reply.detailTexts["value"] = value }
        return reply
    }

    /// The error a failed remote call stands for: the actor's own error as its type when the body
    /// names one that `allowed` gives (by mangled name) and its value decodes; else `error` itself.
    static func rethrown(
        _ error: LifelineError, allowed: (String) -> (any (Error & Decodable).Type)?
    ) -> any Error {
        guard let body = try? JSONDocument(text: error.bodyText), case .object(let members) = body.root,
            let nameNode = members["swiftType"], let name = body.string(at: nameNode),
            let valueNode = members["value"], let type = allowed(name)
        else { return error }
        return decode(type, from: body, at: valueNode) ?? error
    }

    @inline(never)
    private static func decode<E: Error & Decodable>(_ type: E.Type, from body: JSONDocument, at node: Int)
        -> (any Error)?
    {
        try? body.decode(type, at: node)
    }
}
