import Distributed
import LifelineProtocol
import Synchronization

extension LifelineActorSystem {
    /// Takes what a hosted actor's distributed func returned or threw, for the CALL's reply.
    public struct ResultHandler: DistributedTargetInvocationResultHandler {
        public typealias SerializationRequirement = any Codable

        private final class Outcome: Sendable {
            let value = Mutex<Result<[UInt8], any Error>?>(nil)
        }

        private let outcome = Outcome()

        init() {}

        /// Keeps the returned value's JSON text, the reply's body.
        /// - Throws: never; a value JSON cannot hold (a non-finite number) is kept as the call's error.
        public func onReturn<Success: Codable>(value: Success) async throws {
            let result: Result<[UInt8], any Error> = Result { try JSONBytesEncoder.encode(value) }
            outcome.value.withLock { $0 = result }
        }

        /// Keeps `null`, the reply of a func that returns nothing.
        /// - Throws: never.
        public func onReturnVoid() async throws {
            outcome.value.withLock { $0 = .success(Array("null".utf8)) }
        }

        /// Keeps the error, which the reply carries (``StatusReportingError``, `Codable` errors).
        /// - Throws: never.
        public func onThrow<Err: Error>(error: Err) async throws {
            outcome.value.withLock { $0 = .failure(error) }
        }

        /// What the func answered.
        /// - Throws: what it threw.
        func result() throws -> [UInt8] {
            guard let result = outcome.value.withLock({ $0 }) else { return Array("null".utf8) }
            return try result.get()
        }
    }
}
