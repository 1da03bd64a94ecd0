import LifelineProtocol
import Synchronization

/// The events a service's handler queue dropped because its handlers fell behind: how many in all
/// (reported to the broker with every heartbeat) and the range not yet told to the service's
/// `onGap` hook.
final class DropCounter: Sendable {
    private struct Pending {
        var first: UInt64
        var last: UInt64
        var count: Int
        var epoch: UInt64
    }

    private let total = Atomic<UInt64>(0)
    private let pending = Mutex<Pending?>(nil)
    /// True when `pending` may hold drops not yet told (checked before taking the lock).
    private let untold = Atomic<Bool>(false)
    /// Dropped events whose publisher waits for an acknowledgement: (sequence, epoch).
    private let unacknowledged = Mutex<[(UInt64, UInt64)]>([])

    /// Every event dropped since the service started.
    var dropped: UInt64 { total.load(ordering: .relaxed) }

    /// True when drops wait to be told to the handlers (a cheap check, no lock).
    var hasUntold: Bool { untold.load(ordering: .acquiring) }

    func record(_ message: BusMessage) {
        total.add(1, ordering: .relaxed)
        if message.header.flags & 1 == 1 {
            unacknowledged.withLock { $0.append((message.header.sequence, message.header.epoch)) }
        }
        pending.withLock { pending in
            if var range = pending {
                range.first = min(range.first, message.header.sequence)
                range.last = max(range.last, message.header.sequence)
                range.count += 1
                pending = range
            } else {
                pending = Pending(
                    first: message.header.sequence, last: message.header.sequence, count: 1,
                    epoch: message.header.epoch)
            }
        }
        untold.store(true, ordering: .releasing)
    }

    /// The dropped events that asked for an acknowledgement, not yet answered (each once).
    func takeUnacknowledged() -> [(sequence: UInt64, epoch: UInt64)] {
        unacknowledged.withLock { events in
            defer { events.removeAll() }
            return events.map { (sequence: $0.0, epoch: $0.1) }
        }
    }

    /// The drops not yet told, as one gap notice; nil when there are none.
    func takeNotice(limit: Int) -> GapNotice? {
        guard untold.exchange(false, ordering: .acquiringAndReleasing),
            let range = pending.withLock({ pending in
                defer { pending = nil }; return pending
            })
        else { return nil }
        return GapNotice(
            after: range.first - 1,
            reason:
                "the handlers fell behind: the queue of \(limit) events was full and dropped \(range.count) of #\(range.first)...#\(range.last)",
            epoch: range.epoch, sequence: range.last)
    }
}
