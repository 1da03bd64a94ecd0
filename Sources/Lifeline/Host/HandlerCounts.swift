import LifelineProtocol
import Synchronization

/// How many events the service's handlers have run, by event name (reported in heartbeats, for
/// `lifeline stats` and `/metrics`). The names are fixed when it is made; counting takes no lock.
final class HandlerCounts: Sendable {
    private final class Counter: Sendable {
        let value = Atomic<UInt64>(0)
    }

    private let counters: [EventName: Counter]

    init(events: some Sequence<EventName>) {
        counters = Dictionary(events.map { ($0, Counter()) }, uniquingKeysWith: { first, _ in first })
    }

    func record(_ event: EventName) { counters[event]?.value.add(1, ordering: .relaxed) }

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
