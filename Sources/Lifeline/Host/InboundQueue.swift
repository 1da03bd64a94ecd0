import Synchronization

/// A single-consumer queue between a socket thread and the task that handles what it receives.
/// Lighter than `AsyncStream` on the hot path: no cancellation handler per element, and a consumer
/// that finds elements waiting takes them without suspending.
///
/// Bounded: with `limit` elements waiting, a push drops the oldest element that `droppable` allows
/// (the newest when none does not fit: then the pushed one goes, so the queue never exceeds the
/// limit by more than the elements that may not be dropped) and returns it.
final class InboundQueue<Element: Sendable>: Sendable {
    private struct State {
        var items: [Element] = []
        var head = 0
        var waiter: CheckedContinuation<Element?, Never>?
        var finished = false
    }

    private let state = Mutex(State())
    /// True while the consumer is parked in ``next()`` (set and cleared with `state.waiter`, under
    /// the lock), readable without it.
    private let parked = Atomic<Bool>(false)
    let limit: Int
    private let droppable: @Sendable (Element) -> Bool

    init(limit: Int = .max, droppable: @escaping @Sendable (Element) -> Bool = { _ in false }) {
        self.limit = max(1, limit)
        self.droppable = droppable
    }

    /// Adds `element`; wakes the consumer if it waits. Returns the element dropped to make room.
    @discardableResult
    func push(_ element: Element) -> Element? {
        var dropped: Element?
        let waiter = state.withLock { state -> CheckedContinuation<Element?, Never>? in
            guard !state.finished else { return nil }
            if let waiter = state.waiter {
                state.waiter = nil
                parked.store(false, ordering: .releasing)
                return waiter
            }
            if state.items.count - state.head >= limit {
                if droppable(state.items[state.head]) {
                    dropped = state.items[state.head]
                    state.head += 1
                    if state.head > 4096 && state.head * 2 > state.items.count {
                        state.items.removeFirst(state.head)
                        state.head = 0
                    }
                } else if let index = state.items[state.head...].firstIndex(where: droppable) {
                    dropped = state.items.remove(at: index)
                } else if droppable(element) {
                    dropped = element
                    return nil
                }
            }
            state.items.append(element)
            return nil
        }
        waiter?.resume(returning: element)
        return dropped
    }

    /// Adds `element` without dropping anything, and wakes the consumer if it waits; with `onlyIfRoom`,
    /// only when fewer than `limit` elements wait (returns false, and adds nothing, otherwise).
    func pushWithoutDropping(_ element: Element, onlyIfRoom: Bool) -> Bool {
        let outcome = state.withLock {
            state -> (added: Bool, waiter: CheckedContinuation<Element?, Never>?) in
            guard !state.finished else { return (true, nil) }
            if let waiter = state.waiter {
                state.waiter = nil
                parked.store(false, ordering: .releasing)
                return (true, waiter)
            }
            if onlyIfRoom && state.items.count - state.head >= limit { return (false, nil) }
            state.items.append(element)
            return (true, nil)
        }
        outcome.waiter?.resume(returning: element)
        return outcome.added
    }

    /// True when nothing waits and the consumer is parked in ``next()``: it is handling nothing.
    var consumerIsWaiting: Bool { parked.load(ordering: .acquiring) }

    /// How many elements wait.
    var count: Int { state.withLock { $0.items.count - $0.head } }

    /// No more elements: the consumer gets nil once the queue is empty.
    func finish() {
        let waiter = state.withLock { state -> CheckedContinuation<Element?, Never>? in
            state.finished = true
            parked.store(false, ordering: .releasing)
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
                } else if state.head > 4096 && state.head * 2 > state.items.count {
                    state.items.removeFirst(state.head)
                    state.head = 0
                }
                return .some(element)
            }
            return state.finished ? .some(nil) : nil
        }
    }

    /// The next element if one waits, without suspending: `.some(nil)` once finished and empty, nil
    /// when the consumer would have to wait.
    func poll() -> Element?? { take() }

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
                parked.store(true, ordering: .releasing)
                return nil
            }
            if let ready { continuation.resume(returning: ready) }
        }
    }
}
