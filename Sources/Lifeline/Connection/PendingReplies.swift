import LifelineProtocol
import Synchronization

/// Requests in flight — an awaiting continuation or a completion handler each — resumed from the
/// socket thread by ticket.
final class PendingReplies: Sendable {
    enum Waiter: Sendable {
        case continuation(CancellableWaiter<ControlReply>)
        case handler(@Sendable (Result<ControlReply, LifelineError>) -> Void)

        func resume(_ result: Result<ControlReply, LifelineError>) {
            switch self {
            case .continuation(let waiter):
                waiter.resume(with: result.mapError { $0 as any Error })
            case .handler(let handler): handler(result)
            }
        }
    }

    private let state = Mutex<(next: UInt64, waiting: [UInt64: Waiter], closed: LifelineError?)>(
        (1, [:], nil))

    /// Reserves a ticket and parks `waiter` under it; once the connection has finished the waiter
    /// fails at once (nothing would ever resume it).
    func park(_ waiter: Waiter) -> UInt64 {
        let (ticket, closed) = state.withLock { state -> (UInt64, LifelineError?) in
            let ticket = state.next
            state.next += 1
            if state.closed == nil { state.waiting[ticket] = waiter }
            return (ticket, state.closed)
        }
        if let closed { waiter.resume(.failure(closed)) }
        return ticket
    }

    /// Resumes the request `ticket` with `result` (once; later calls are ignored).
    func resume(_ ticket: UInt64, with result: Result<ControlReply, LifelineError>) {
        let waiter = state.withLock { $0.waiting.removeValue(forKey: ticket) }
        waiter?.resume(result)
    }

    /// Forgets the request `ticket` without resuming it (its task was cancelled).
    func discard(_ ticket: UInt64) {
        _ = state.withLock { $0.waiting.removeValue(forKey: ticket) }
    }

    /// Fails every parked request, and every one parked from now on (the connection has finished).
    func failAll(_ error: LifelineError) {
        let all = state.withLock { state in
            defer { state.waiting.removeAll() }
            state.closed = error
            return Array(state.waiting.values)
        }
        for waiter in all { waiter.resume(.failure(error)) }
    }
}
