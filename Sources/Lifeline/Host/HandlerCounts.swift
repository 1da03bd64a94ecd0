import LifelineProtocol
import Synchronization

/// How many events the service's handlers have run, by event name (reported in heartbeats, for
/// `lifeline stats` and `/metrics`). The names are fixed when it is made; counting takes no lock.
final class HandlerCounts: Sendable {
    /// The count of one event name.
    final class Counter: Sendable {
        fileprivate let value = Atomic<UInt64>(0)

        func increment() { value.add(1, ordering: .relaxed) }
    }

    private let counters: [EventName: Counter]
    private let undecodableCount = Atomic<UInt64>(0)
    private let failedCount = Atomic<UInt64>(0)

    /// Events whose handler ran and threw (counted among those handled too).
    var failed: UInt64 { failedCount.load(ordering: .relaxed) }

    /// Counts a handler that threw.
    func countFailed() { failedCount.add(1, ordering: .relaxed) }

    /// Events whose payload did not decode as a typed handler's type (the handler did not run).
    var undecodable: UInt64 { undecodableCount.load(ordering: .relaxed) }

    /// Counts `failure` when it is a payload that did not decode (its handler did not run); says
    /// whether it was.
    @discardableResult
    func countIfUndecodable(_ failure: any Error) -> Bool {
        guard failure is PayloadDecodingError else { return false }
        undecodableCount.add(1, ordering: .relaxed)
        return true
    }

    init(events: some Sequence<EventName>) {
        counters = Dictionary(events.map { ($0, Counter()) }, uniquingKeysWith: { first, _ in first })
    }

    /// The counter of `event` (nil for a name the service does not handle), for a caller that counts
    /// many events of one name.
    func counter(for event: EventName) -> Counter? { counters[event] }

    /// The names whose handlers ran, with how many times.
    var snapshot: [String: UInt64] {
        var counts: [String: UInt64] = [:]
        for (name, counter) in counters {
            let value = counter.value.load(ordering: .relaxed)
            if value > 0 { counts[name.rawValue] = value }
        }
        return counts
    }
}
