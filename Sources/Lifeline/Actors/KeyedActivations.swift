import Synchronization

/// The actors by key one service instance holds active, each made on its first call and dropped
/// after its deactivation: a key is activating, active (with the calls running on it), or changing
/// (being activated or deactivated — calls to it wait). Calls to one key meet the same actor, which
/// serialises them; calls to different keys do not wait for each other.
final class KeyedActivations<A: Sendable>: Sendable {
    private struct Active {
        let actor: A
        var running: Int
        var lastUsed: ContinuousClock.Instant
    }

    private enum Slot {
        case active(Active)
        /// Being activated or deactivated: the calls that wait for it (resumed with nil to go on,
        /// or with why they are refused).
        case changing([CheckedContinuation<String?, Never>])
    }

    private struct State {
        var slots: [String: Slot] = [:]
        /// Set when the instance leaves: no key is activated again.
        var closed: String?
        /// Set while the broker is silent for too long: no key is activated until it is heard again.
        var suspended: String?
    }

    private enum Step {
        case use(A)
        case wait
        case activate
        case refuse(String)
    }

    private let state = Mutex(State())

    /// The actor of `key`, made with `make` when it is not active (calls to a key being activated or
    /// deactivated wait for that first). Every successful acquire is matched by ``finish(_:)``.
    /// - Throws: what `make` threw (the key stays inactive: the next call tries again), or
    ///   ``ServiceError`` (503) once the instance is leaving.
    func acquire(_ key: String, make: () async throws -> A) async throws -> A {
        while true {
            let step: Step = state.withLock { state in
                if let reason = state.closed { return .refuse(reason) }
                switch state.slots[key] {
                case nil:
                    if let reason = state.suspended { return .refuse(reason) }
                    state.slots[key] = .changing([])
                    return .activate
                case .active(var active):
                    active.running += 1
                    state.slots[key] = .active(active)
                    return .use(active.actor)
                case .changing: return .wait
                }
            }
            switch step {
            case .use(let actor): return actor
            case .refuse(let reason): throw ServiceError(.unavailable, reason)
            case .wait:
                if let refusal = await waitForChange(of: key) { throw ServiceError(.unavailable, refusal) }
            case .activate:
                let actor: A
                do {
                    actor = try await make()
                } catch {
                    settle(key, as: nil)
                    throw error
                }
                settle(key, as: Active(actor: actor, running: 1, lastUsed: .now))
                return actor
            }
        }
    }

    /// A call to `key` that ``acquire(_:make:)`` let through has finished.
    func finish(_ key: String) {
        state.withLock { state in
            guard case .active(var active) = state.slots[key] else { return }
            active.running -= 1
            active.lastUsed = .now
            state.slots[key] = .active(active)
        }
    }

    /// The keys with no call running, unused since before `cutoff`.
    func idle(since cutoff: ContinuousClock.Instant) -> [String] {
        state.withLock { state in
            state.slots.compactMap { key, slot in
                guard case .active(let active) = slot, active.running == 0, active.lastUsed <= cutoff else {
                    return nil
                }
                return key
            }.sorted()
        }
    }

    /// Whether `key` is active here, or being activated or deactivated.
    func holds(_ key: String) -> Bool { state.withLock { $0.slots[key] != nil } }

    /// The keys active now.
    var keys: [String] {
        state.withLock { state in
            state.slots.compactMap { key, slot in if case .active = slot { key } else { nil } }.sorted()
        }
    }

    /// Starts deactivating `key` when it is active and no call runs on it (`force`: even then);
    /// returns its actor. Calls to it wait until ``endDeactivation(of:)``.
    func beginDeactivation(of key: String, force: Bool = false) -> A? {
        state.withLock { state in
            guard case .active(let active) = state.slots[key], force || active.running == 0 else {
                return nil
            }
            state.slots[key] = .changing([])
            return active.actor
        }
    }

    /// `key` is inactive now; the calls that waited for it activate it again — or, with `refusing`,
    /// are refused with it (the broker forgot the key: they are calls it has given up on).
    func endDeactivation(of key: String, refusing: String? = nil) { settle(key, as: nil, refusing: refusing) }

    /// Until called again with nil, no key is activated: calls to a key not active are refused
    /// with `reason`.
    func suspend(_ reason: String?) { state.withLock { $0.suspended = reason } }

    /// From now on no key is activated: calls are refused with `reason`.
    func close(_ reason: String) { state.withLock { $0.closed = reason } }

    private func settle(_ key: String, as active: Active?, refusing: String? = nil) {
        let waiting: [CheckedContinuation<String?, Never>] = state.withLock { state in
            guard case .changing(let waiting) = state.slots[key] else { return [] }
            state.slots[key] = active.map { .active($0) }
            return waiting
        }
        for continuation in waiting { continuation.resume(returning: refusing) }
    }

    /// Waits until `key` is no longer changing; returns why the caller is refused, if it is.
    private func waitForChange(of key: String) async -> String? {
        await withCheckedContinuation { (continuation: CheckedContinuation<String?, Never>) in
            let now: Bool = state.withLock { state in
                guard case .changing(var waiting) = state.slots[key] else { return true }
                waiting.append(continuation)
                state.slots[key] = .changing(waiting)
                return false
            }
            if now { continuation.resume(returning: nil) }
        }
    }
}
