import Synchronization

/// A continuation that is resumed once — by its answer, or by the waiting task's cancellation,
/// whichever comes first (`CancellationError` then; the answer that comes later is dropped).
final class CancellableWaiter<Value: Sendable>: Sendable {
    private struct State {
        var continuation: CheckedContinuation<Value, any Error>?
        var over = false
        var cancelled = false
        /// What to give back when the task is cancelled before the answer.
        var release: (@Sendable () -> Void)?
    }

    private let state = Mutex(State())

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
            state.release = nil
            return state.continuation.take()
        }
        continuation?.resume(with: result)
    }

    func resume(returning value: Value) { resume(with: .success(value)) }
    func resume(throwing error: any Error) { resume(with: .failure(error)) }

    /// The waiting task was cancelled: it is resumed with `CancellationError` at once, and what it
    /// held (``whenCancelled(_:)``) is given back.
    func cancel() {
        let (continuation, release) = state.withLock { state in
            let answered = state.over
            state.over = true
            state.cancelled = !answered || state.cancelled
            return (state.continuation.take(), answered ? nil : state.release.take())
        }
        continuation?.resume(throwing: CancellationError())
        release?()
    }

    /// Runs `release` if the task is cancelled before its answer comes (at once, when it was
    /// cancelled already): the request it stands for is forgotten where it waits.
    func whenCancelled(_ release: @escaping @Sendable () -> Void) {
        let now = state.withLock { state -> Bool in
            if state.cancelled { return true }
            if !state.over { state.release = release }
            return false
        }
        if now { release() }
    }

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
