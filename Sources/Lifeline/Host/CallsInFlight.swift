import Synchronization

/// The calls answered in tasks of their own on the socket thread (``ImmediateDelivery``), counted so
/// that the runner ends only once the last of them has.
final class CallsInFlight: Sendable {
    private let state = Mutex<(count: Int, waiters: [CheckedContinuation<Void, Never>])>((0, []))

    func begin() { state.withLock { $0.count += 1 } }

    func end() {
        let waiters = state.withLock { state -> [CheckedContinuation<Void, Never>] in
            state.count -= 1
            guard state.count == 0 else { return [] }
            defer { state.waiters.removeAll() }
            return state.waiters
        }
        for waiter in waiters { waiter.resume() }
    }

    /// Returns once no call is in flight.
    func drained() async {
        await withCheckedContinuation { continuation in
            let idle = state.withLock { state -> Bool in
                if state.count > 0 { state.waiters.append(continuation) }
                return state.count == 0
            }
            if idle { continuation.resume() }
        }
    }
}
