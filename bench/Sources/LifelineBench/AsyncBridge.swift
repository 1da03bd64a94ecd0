import Dispatch
import Synchronization

/// Runs async code from the driver's thread (never a thread of the Swift pool) and waits for it.
enum AsyncBridge {
    private final class Outcome<Value: Sendable>: Sendable {
        let result = Mutex<Result<Value, any Error>?>(nil)
    }

    static func run<Value: Sendable>(_ body: @escaping @Sendable () async throws -> Value) throws -> Value {
        let outcome = Outcome<Value>()
        let done = DispatchSemaphore(value: 0)
        Task {
            let result: Result<Value, any Error>
            do {
                result = .success(try await body())
            } catch {
                result = .failure(error)
            }
            outcome.result.withLock { $0 = result }
            done.signal()
        }
        done.wait()
        return try outcome.result.withLock { $0! }.get()
    }

    static func run(_ body: @escaping @Sendable () async -> Void) {
        let done = DispatchSemaphore(value: 0)
        Task {
            await body()
            done.signal()
        }
        done.wait()
    }
}
