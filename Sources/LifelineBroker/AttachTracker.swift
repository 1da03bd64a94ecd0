/// Matches clients to their bus subscriptions: a client subscribes to the marker `!token` after its
/// event topics, then asks the broker (ATTACH, REGISTER) to go on only once the marker arrived through
/// the XPUB socket — from then on every event it subscribed to reaches it.
struct AttachTracker<Waiter> {
    /// Upper bound on remembered markers; the oldest are forgotten first.
    static var capacity: Int { 65_536 }

    private var seen: [String: UInt64] = [:]
    private var waiters: [String: [(waiter: Waiter, deadline: UInt64)]] = [:]

    /// Reads an XPUB notice (`0x01` or `0x00` then the topic); returns the marker token, if any.
    static func token(inNotice notice: [UInt8]) -> (subscribed: Bool, token: String)? {
        guard notice.count > 2, notice[0] <= 1, notice[1] == UInt8(ascii: "!") else { return nil }
        return (notice[0] == 1, String(decoding: notice[2...], as: UTF8.self))
    }

    func hasSeen(_ token: String) -> Bool { seen[token] != nil }

    /// Records a marker subscription and returns the waiters it releases.
    mutating func markerSubscribed(_ token: String, now: UInt64) -> [Waiter] {
        if seen.count >= Self.capacity, let oldest = seen.min(by: { $0.value < $1.value }) {
            seen[oldest.key] = nil
        }
        seen[token] = now
        return waiters.removeValue(forKey: token)?.map(\.waiter) ?? []
    }

    mutating func markerUnsubscribed(_ token: String) { seen[token] = nil }

    /// Parks `waiter` until `token` is seen or `deadline` passes.
    mutating func wait(for token: String, _ waiter: Waiter, deadline: UInt64) {
        waiters[token, default: []].append((waiter, deadline))
    }

    /// Removes and returns waiters whose deadline passed.
    mutating func removeExpired(now: UInt64) -> [(token: String, waiter: Waiter)] {
        var expired: [(String, Waiter)] = []
        for (token, list) in waiters {
            let (late, onTime) = (list.filter { $0.deadline <= now }, list.filter { $0.deadline > now })
            expired += late.map { (token, $0.waiter) }
            waiters[token] = onTime.isEmpty ? nil : onTime
        }
        return expired
    }

    /// True when a waiter for `token` exists and `matches` one of them.
    func isWaiting(_ matches: (Waiter) -> Bool) -> Bool {
        waiters.values.contains { $0.contains { matches($0.waiter) } }
    }

    var nextDeadline: UInt64? { waiters.values.lazy.flatMap { $0.map(\.deadline) }.min() }
}
