import LifelineProtocol
import Synchronization

/// How many events the service's handlers have run, by event name (reported in heartbeats, for
/// `lifeline stats` and `/metrics`).
final class HandlerCounts: Sendable {
    private let counts = Mutex<[String: UInt64]>([:])

    func record(_ event: EventName) { counts.withLock { $0[event.rawValue, default: 0] += 1 } }

    var snapshot: [String: UInt64] { counts.withLock { $0 } }
}
