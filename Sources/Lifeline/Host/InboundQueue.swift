import Synchronization

/// A single-consumer queue between a socket thread and the task that handles what it receives.
/// Lighter than `AsyncStream` on the hot path: no cancellation handler per element, and a consumer
/// that finds elements waiting takes them without suspending.
final class InboundQueue<Element: Sendable>: Sendable {
    private struct State {
        var items: [Element] = []
        var head = 0
        var waiter: CheckedContinuation<Element?, Never>?
        var finished = false
    }

    private let state = Mutex(State())

    /// Adds `element`; wakes the consumer if it waits.
    func push(_ element: Element) {
        let waiter = state.withLock { state -> CheckedContinuation<Element?, Never>? in
            guard !state.finished else { return nil }
            if let waiter = state.waiter {
                state.waiter = nil
                return waiter
            }
            state.items.append(element)
            return nil
        }
        waiter?.resume(returning: element)
    }

    /// No more elements: the consumer gets nil once the queue is empty.
    func finish() {
        let waiter = state.withLock { state -> CheckedContinuation<Element?, Never>? in
            state.finished = true
            defer { state.waiter = nil }
            return state.waiter
        }
        waiter?.resume(returning: nil)
    }

    private func take() -> Element?? {
        state.withLock { state -> Element?? in
            if state.head < state.items.count {
                let element = state.items[state.head]
                state.head += 1
                if state.head == state.items.count {
                    state.items.removeAll(keepingCapacity: true)
                    state.head = 0
                }
                return .some(element)
            }
            return state.finished ? .some(nil) : nil
        }
    }

    /// The next element, waiting for one; nil after ``finish()``.
    func next() async -> Element? {
        if let ready = take() { return ready }
        return await withCheckedContinuation { continuation in
            let ready = state.withLock { state -> Element?? in
                if state.head < state.items.count {
                    let element = state.items[state.head]
                    state.head += 1
                    return .some(element)
                }
                if state.finished { return .some(nil) }
                state.waiter = continuation
                return nil
            }
            if let ready { continuation.resume(returning: ready) }
        }
    }
}
