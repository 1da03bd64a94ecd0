import Distributed
import LifelineProtocol
import Synchronization

/// Takes what a hosted actor's distributed func returned or threw, for the CALL's reply.
public struct LifelineResultHandler: DistributedTargetInvocationResultHandler {
    public typealias SerializationRequirement = any Codable

    private final class Outcome: Sendable {
        let value = Mutex<Result<JSONValue, any Error>?>(nil)
    }

    private let outcome = Outcome()

    init() {}

    /// - Throws: `EncodingError` for a value JSON cannot hold.
    public func onReturn<Success: Codable>(value: Success) async throws {
        let result: Result<JSONValue, any Error> = Result { try JSONValueEncoder.encode(value) }
        outcome.value.withLock { $0 = result }
    }

    public func onReturnVoid() async throws {
        outcome.value.withLock { $0 = .success(.null) }
    }

    public func onThrow<Err: Error>(error: Err) async throws {
        outcome.value.withLock { $0 = .failure(error) }
    }

    /// What the func answered.
    /// - Throws: what it threw.
    func result() throws -> JSONValue {
        guard let result = outcome.value.withLock({ $0 }) else { return .null }
        return try result.get()
    }
}
