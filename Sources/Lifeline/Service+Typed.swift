import LifelineProtocol

extension Service {
    /// Handles the events of type `E`, decoded: the handler gets the value and the event it came in
    /// (its sequence, epoch, time, whether it was replayed, and the service's context). A payload
    /// that does not decode as `E` does not reach the handler: it is logged with its coding path,
    /// counted (`lifeline stats`), and an acknowledged event is acknowledged with that error. A custom
    /// event is described (`lifeline describe`, `lifeline events --broker`) with the fields of `E`.
    /// Runs like ``on(_:priority:deadline:perform:)-(EventName,_,_,_)``: one event at a time, in bus
    /// order, off the socket thread.
    public func on<E: LifelineEvent>(
        _ type: E.Type, priority: Int? = nil, deadline: Duration? = nil,
        perform handler: @escaping @Sendable (E, Event) async throws -> Void
    ) -> Service {
        handle(E.name, priority: priority, deadline: deadline) { event in
            try await handler(try event.decode(E.self), event)
            return .continue
        }
        .describingIfCustom(E.self)
    }

    /// Handles the events of type `E`, decoded, with an ``Answer`` for dispatches (which may carry
    /// a rewritten value: `try .continue(rewriting: OpenURL(url: …))`). A payload that does not decode
    /// is answered with a 400 naming its coding path; the chain goes on to the next service.
    public func handle<E: LifelineEvent>(
        _ type: E.Type, priority: Int? = nil, deadline: Duration? = nil,
        answer handler: @escaping @Sendable (E, Event) async throws -> Answer
    ) -> Service {
        handle(E.name, priority: priority, deadline: deadline) { event in
            try await handler(try event.decode(E.self), event)
        }
        .describingIfCustom(E.self)
    }

    /// Answers calls to `method` with typed arguments and reply: the call's body decodes as
    /// `Arguments` (one that does not is answered 400, naming the coding path), the handler's value is
    /// the reply. `lifeline describe` shows both shapes, taken from the types.
    ///
    /// ```swift
    /// .method("resolve") { (request: Resolve, call) async throws -> Route in … }
    /// ```
    ///
    /// An `idempotent` method may be sent to another instance when the one answering goes away
    /// (``idempotent(_:)``).
    public func method<Arguments: Decodable & Sendable, Reply: Codable & Sendable>(
        _ method: String, summary: String = "", idempotent: Bool = false,
        _ handler: @escaping @Sendable (Arguments, CallRequest) async throws -> Reply
    ) -> Service {
        (idempotent ? self.idempotent(method) : self).textMethod(method) {
            (call: CallRequest) async throws -> [UInt8] in
            let arguments: Arguments
            do {
                arguments = try JSONBytesDecoder.decode(Arguments.self, from: call.text)
            } catch {
                throw ServiceError(.badRequest, "\(method): \(error)")
            }
            return try JSONBytesEncoder.encode(try await handler(arguments, call))
        }
        .describing(
            method, summary: summary, arguments: TypeShape.of(Arguments.self).text,
            reply: TypeShape.of(Reply.self).text)
    }

    /// Answers calls to `method`, which take no arguments, with a typed reply (its shape shown by
    /// `lifeline describe`).
    public func method<Reply: Codable & Sendable>(
        _ method: String, summary: String = "", idempotent: Bool = false,
        _ handler: @escaping @Sendable (CallRequest) async throws -> Reply
    ) -> Service {
        (idempotent ? self.idempotent(method) : self).textMethod(method) {
            (call: CallRequest) async throws -> [UInt8] in
            try JSONBytesEncoder.encode(try await handler(call))
        }
        .describing(method, summary: summary, arguments: "", reply: TypeShape.of(Reply.self).text)
    }

    /// Describes `E` from its type when it is a custom event (a built-in one is described already).
    func describingIfCustom<E: LifelineEvent>(_ type: E.Type) -> Service {
        E.name.isCustom ? describing(type) : checkingBuiltIn(type)
    }

    /// Describes the custom event `E` from its type: its fields as `lifeline describe` shows them.
    func describing<E: LifelineEvent>(_ type: E.Type) -> Service {
        var copy = self
        let existing = copy.description.events[E.name.rawValue]
        copy.description.events[E.name.rawValue] = ServiceDescription.Event(
            summary: existing?.summary ?? "", fields: TypeShape.of(E.self).fields)
        return copy
    }
}

extension Answer {
    /// Continue with a rewritten value (openURL's new URL) that the next services see.
    /// - Throws: `EncodingError` for a number JSON cannot hold.
    public static func `continue`<E: LifelineEvent>(rewriting value: E) throws -> Answer {
        Answer(.continue, text: try value.text(), completionText: nil)
    }

    /// Continue, contributing `completion` (any `Encodable`, e.g. a `Bool` or a reply struct) to the
    /// event's combined completion.
    /// - Throws: `EncodingError` for a number JSON cannot hold.
    public static func completed<T: Encodable>(with completion: T) throws -> Answer {
        Answer(.continue, text: nil, completionText: try JSONBytesEncoder.encode(completion))
    }
}
