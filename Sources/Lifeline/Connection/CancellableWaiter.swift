import Synchronization

/// A continuation that is resumed once — by its answer, or by the waiting task's cancellation,
/// whichever comes first (`CancellationError` then; the answer that comes later is dropped).
final class CancellableWaiter<Value: Sendable>: Sendable {
    private let state = Mutex<(continuation: CheckedContinuation<Value, any Error>?, over: Bool)>(
        (nil, false))

    /// Holds `continuation` until the answer; returns false (having resumed it with
    /// `CancellationError`) when the task was cancelled already: nothing is to be sent then.
    func install(_ continuation: CheckedContinuation<Value, any Error>) -> Bool {
        let cancelled = state.withLock { state -> Bool in
            if state.over { return true }
            state.continuation = continuation
            return false
        }
        if cancelled { continuation.resume(throwing: CancellationError()) }
        return !cancelled
    }

    /// Resumes the waiting task with `result`, unless it was resumed already.
    func resume(with result: Result<Value, any Error>) {
        let continuation = state.withLock { state -> CheckedContinuation<Value, any Error>? in
            state.over = true
            return state.continuation.take()
        }
        continuation?.resume(with: result)
    }

    func resume(returning value: Value) { resume(with: .success(value)) }
    func resume(throwing error: any Error) { resume(with: .failure(error)) }

    /// The waiting task was cancelled: it is resumed with `CancellationError` at once.
    func cancel() { resume(with: .failure(CancellationError())) }

    /// Waits for the answer `start` arranges (given this waiter, once installed), ending at once
    /// with `CancellationError` when the task is cancelled.
    static func wait(_ start: @escaping @Sendable (CancellableWaiter<Value>) -> Void) async throws -> Value {
        let waiter = CancellableWaiter<Value>()
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                if waiter.install(continuation) { start(waiter) }
            }
        } onCancel: {
            waiter.cancel()
        }
    }
}
