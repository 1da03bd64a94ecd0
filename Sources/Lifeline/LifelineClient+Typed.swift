import LifelineProtocol

extension LifelineClient {
    /// Publishes `event` (its type names it) and returns the broker's receipt, as
    /// ``publish(_:_:acknowledged:force:timeout:)`` does for a name and a JSON payload.
    /// - Throws: `EncodingError` for a number JSON cannot hold; ``LifelineError`` as
    ///   ``publish(_:_:acknowledged:force:timeout:)`` throws it.
    @discardableResult
    public func publish<E: LifelineEvent>(
        _ event: E, acknowledged: Bool = false, force: Bool = false, timeout: Duration = .seconds(10)
    ) async throws -> PublishReceipt {
        try await publish(
            PublishedEvent(E.name, payload: try event.text()), acknowledged: acknowledged, force: force,
            timeout: timeout)
    }

    /// Posts `event` (its type names it) without waiting for its receipt, as
    /// ``post(_:_:timeout:)`` does for a name and a JSON payload.
    /// - Throws: `EncodingError` for a number JSON cannot hold (nothing is posted).
    public func post<E: LifelineEvent>(_ event: E, timeout: Duration = .seconds(10)) async throws {
        await post(PublishedEvent(E.name, payload: try event.text()), timeout: timeout)
    }

    /// Publishes `events` in order, batched as ``publish(contentsOf:batchSize:window:timeout:)-(PublishedEvent,_,_,_)``
    /// batches them.
    /// - Throws: `EncodingError` for a number JSON cannot hold (before anything is sent);
    ///   ``LifelineError`` for the first refused batch, or when the broker does not answer.
    @discardableResult
    public func publish<E: LifelineEvent>(
        contentsOf events: some Sequence<E>, batchSize: Int = 1000, window: Int = 4,
        timeout: Duration = .seconds(10)
    ) async throws -> [PublishReceipt] {
        let published = try events.map { PublishedEvent(E.name, payload: try $0.text()) }
        return try await publish(
            contentsOf: published, batchSize: batchSize, window: window, timeout: timeout)
    }

    /// Calls `method` of `service` with `arguments` and decodes its answer as `Reply`.
    /// - Throws: `EncodingError` for arguments JSON cannot hold; ``LifelineError`` as
    ///   ``call(_:_:_:timeout:)`` throws it; ``PayloadDecodingError`` when the answer does not decode
    ///   as `Reply` (naming the coding path).
    public func call<Arguments: Encodable, Reply: Decodable>(
        _ service: String, _ method: String, _ arguments: Arguments, returning reply: Reply.Type,
        timeout: Duration = .seconds(5)
    ) async throws -> Reply {
        let reply = try await call(
            service, method, text: try JSONBytesEncoder.encode(arguments), timeout: timeout)
        return try Self.decodeAnswer(reply.body, as: Reply.self)
    }

    /// Kept out of line: decoding inlined into the async caller once crashed the release compiler.
    @inline(never)
    static func decodeAnswer<Reply: Decodable>(_ text: [UInt8], as type: Reply.Type)
        throws(PayloadDecodingError) -> Reply
    {
        try JSONBytesDecoder.decode(type, from: text)
    }
}
