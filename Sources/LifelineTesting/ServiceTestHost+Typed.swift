import Lifeline
import LifelineProtocol

extension ServiceTestHost {
    /// Publishes the typed `event` to the service and returns once its handler has run.
    /// - Throws: ``HandlerFailure`` when the handler threw (or the payload did not decode); an
    ///   `EncodingError` for a number JSON cannot hold.
    @discardableResult
    public func publish<E: LifelineEvent>(_ event: E) async throws -> UInt64 {
        try await publish(E.name, text: try Self.encode(event))
    }

    /// Offers the typed `event` as one step of a dispatch and returns the handler's answer.
    /// - Throws: `LifelineError` when the service answers with an error status.
    public func dispatch<E: LifelineEvent>(_ event: E, timeout: Duration = .seconds(5)) async throws
        -> DispatchAnswer
    {
        try await dispatch(E.name, text: try Self.encode(event), timeout: timeout)
    }

    /// Calls `method` with typed arguments and decodes the answer as `Reply`.
    /// - Throws: `LifelineError` with the status and message the service answered;
    ///   `PayloadDecodingError` when the answer does not decode as `Reply`.
    public func call<Arguments: Encodable, Reply: Decodable>(
        _ method: String, _ arguments: Arguments, returning reply: Reply.Type, service: String? = nil,
        key: String? = nil, timeout: Duration = .seconds(5)
    ) async throws -> Reply {
        let answer = await call(
            method, text: try Self.encode(arguments), service: service, key: key, timeout: timeout)
        guard answer.status.isSuccess else { throw LifelineError(reply: answer) }
        return try Self.decode(answer.body, as: reply)
    }

    /// Kept out of line, as the client's typed calls are (their typed-throwing coding inlined into an
    /// async caller once crashed the release compiler).
    @inline(never)
    static func encode<T: Encodable>(_ value: T) throws -> [UInt8] { try JSONBytesEncoder.encode(value) }

    @inline(never)
    static func decode<T: Decodable>(_ text: [UInt8], as type: T.Type) throws(PayloadDecodingError) -> T {
        try JSONBytesDecoder.decode(type, from: text)
    }
}
