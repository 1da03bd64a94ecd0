import Synchronization

/// How far a ``ServiceRunner`` has come, for code that waits on it (LifelineTesting's host waits
/// until the service is serving before it delivers anything).
package final class RunnerPhase: Sendable {
    package enum Phase: Int, Sendable, Comparable {
        /// `run()` has not connected yet (the resume hook runs first).
        case starting
        /// The connection exists; the service has not joined yet.
        case connected
        /// didCreate has returned and events reach the handlers.
        case serving
        /// `run()` has returned or thrown.
        case ended

        package static func < (left: Phase, right: Phase) -> Bool { left.rawValue < right.rawValue }
    }

    private struct State {
        var phase = Phase.starting
        var waiters: [(Phase, CheckedContinuation<Phase, Never>)] = []
    }

    private let state = Mutex(State())

    /// Moves forward to `phase` (never back) and resumes those waiting for it.
    func advance(to phase: Phase) {
        let ready = state.withLock { state -> [(CheckedContinuation<Phase, Never>, Phase)] in
            guard phase > state.phase else { return [] }
            state.phase = phase
            let (due, rest) = (
                state.waiters.filter { $0.0 <= phase }, state.waiters.filter { $0.0 > phase }
            )
            state.waiters = rest
            return due.map { ($0.1, phase) }
        }
        for (continuation, phase) in ready { continuation.resume(returning: phase) }
    }

    /// Waits until the runner has reached `phase` (or ended); returns the phase it is in.
    package func wait(for phase: Phase) async -> Phase {
        await withCheckedContinuation { continuation in
            let now = state.withLock { state -> Phase? in
                if state.phase >= phase { return state.phase }
                state.waiters.append((phase, continuation))
                return nil
            }
            if let now { continuation.resume(returning: now) }
        }
    }
}
