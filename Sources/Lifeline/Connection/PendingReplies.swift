import LifelineProtocol
import Synchronization

/// Requests in flight — an awaiting continuation or a completion handler each — resumed from the
/// socket thread by ticket.
final class PendingReplies: Sendable {
    /// Who waits for a request's outcome: the broker's reply, whatever its status, or what kept
    /// one from coming (``LifelineError``).
    enum Waiter: Sendable {
        /// A task; a non-2xx reply resumes it with ``LifelineError``.
        case continuation(CancellableWaiter<ControlReply>)
        /// A completion handler; a non-2xx reply arrives as ``LifelineError``.
        case handler(@Sendable (Result<ControlReply, LifelineError>) -> Void)
        /// A completion handler that takes every reply as it came (a CALL's caller reads a
        /// service's own error replies).
        case reply(@Sendable (Result<ControlReply, LifelineError>) -> Void)

        func resume(_ result: Result<ControlReply, LifelineError>) {
            switch self {
            case .continuation(let waiter):
                waiter.resume(with: Self.refusingErrors(result).mapError { $0 as any Error })
            case .handler(let handler): handler(Self.refusingErrors(result))
            case .reply(let handler): handler(result)
            }
        }

        private static func refusingErrors(_ result: Result<ControlReply, LifelineError>)
            -> Result<ControlReply, LifelineError>
        {
            guard case .success(let reply) = result, !reply.status.isSuccess else { return result }
            return .failure(LifelineError(reply: reply))
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
