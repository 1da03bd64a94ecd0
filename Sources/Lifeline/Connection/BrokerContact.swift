import LifelineProtocol
import LifelineSupport
import Synchronization

/// When the broker a service is registered with last proved it had heard from the service: the
/// send time (`SystemClock` monotonic nanoseconds) of the newest request of the service it answered.
/// An instance holding actors by key drops them before the broker may count it gone; the broker
/// counts from the last message it got from the instance, which is never older than that send
/// time — whatever else reaches the instance (heartbeats, calls, a standby's answers).
final class BrokerContact: Sendable {
    private let lastAnswered = Atomic<UInt64>(0)
    private let brokerWindow = Atomic<UInt64>(0)
    private let brokerInterval = Atomic<UInt64>(0)

    /// The broker answered a request this service sent at `sentAt`.
    func answered(sentAt: UInt64) {
        var current = lastAnswered.load(ordering: .relaxed)
        while sentAt > current {
            let (exchanged, original) = lastAnswered.compareExchange(
                expected: current, desired: sentAt, ordering: .relaxed)
            if exchanged { return }
            current = original
        }
    }

    /// The service registered with a broker that beats with `brokerHeartbeat`.
    func registered(brokerHeartbeat: HeartbeatSettings) {
        brokerWindow.store(brokerHeartbeat.expiryNanoseconds, ordering: .relaxed)
        brokerInterval.store(brokerHeartbeat.intervalNanoseconds, ordering: .relaxed)
    }

    /// The heartbeat window and interval of the broker last registered with, in nanoseconds; nil
    /// before the first registration.
    var broker: (window: UInt64, interval: UInt64)? {
        let window = brokerWindow.load(ordering: .relaxed)
        return window == 0 ? nil : (window, brokerInterval.load(ordering: .relaxed))
    }

    /// How long since the newest answered request was sent, in nanoseconds; nil before any was.
    func silence(now: UInt64 = SystemClock.monotonicNanoseconds()) -> UInt64? {
        let last = lastAnswered.load(ordering: .relaxed)
        return last == 0 ? nil : now &- min(last, now)
    }
}
