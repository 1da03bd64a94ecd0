import LifelineProtocol
import Synchronization

/// Continuations of requests in flight, resumed from the socket thread by ticket.
final class PendingReplies: Sendable {
    private let state = Mutex<(next: UInt64, waiting: [UInt64: CheckedContinuation<ControlReply, any Error>])>((1, [:]))

    /// Reserves a ticket and parks `continuation` under it.
    func park(_ continuation: CheckedContinuation<ControlReply, any Error>) -> UInt64 {
        state.withLock { state in
            let ticket = state.next
            state.next += 1
            state.waiting[ticket] = continuation
            return ticket
        }
    }

    /// Resumes the request `ticket` with `result` (once; later calls are ignored).
    func resume(_ ticket: UInt64, with result: Result<ControlReply, LifelineError>) {
        let continuation = state.withLock { $0.waiting.removeValue(forKey: ticket) }
        continuation?.resume(with: result.mapError { $0 as any Error })
    }

    /// Fails every parked request.
    func failAll(_ error: LifelineError) {
        let all = state.withLock { state in
            defer { state.waiting.removeAll() }
            return Array(state.waiting.values)
        }
        for continuation in all { continuation.resume(throwing: error) }
    }
}
