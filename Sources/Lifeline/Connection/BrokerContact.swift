import LifelineSupport
import Synchronization

/// When a service's connection last heard from the broker (`SystemClock` monotonic nanoseconds),
/// for those who must act before the connection gives the broker up: an instance holding actors by
/// key drops them while the broker may still think it holds them.
final class BrokerContact: Sendable {
    private let lastHeard = Atomic<UInt64>(0)

    /// The connection heard from the broker at `now`.
    func heard(at now: UInt64) { lastHeard.store(now, ordering: .relaxed) }

    /// How long the broker has been silent, in nanoseconds; nil before it was first heard.
    func silence(now: UInt64 = SystemClock.monotonicNanoseconds()) -> UInt64? {
        let last = lastHeard.load(ordering: .relaxed)
        return last == 0 ? nil : now &- min(last, now)
    }
}
