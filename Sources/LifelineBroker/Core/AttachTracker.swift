/// Matches clients to their bus subscriptions: a client subscribes to the marker `!token` after its
/// event topics, then asks the broker (ATTACH, REGISTER) to go on only once the marker arrived through
/// the XPUB socket — from then on every event it subscribed to reaches it. Under CURVE a marker
/// counts only for requests of the key whose bus connection subscribed it: another key cannot
/// answer a service's REGISTER early by subscribing its marker.
struct AttachTracker {
    /// Upper bound on remembered markers; the oldest are forgotten first.
    static var capacity: Int { 65_536 }

    /// Token → the serial number it was seen under.
    private var seen: [String: UInt64] = [:]
    /// Markers in the order they were seen (with their serial, so that a token seen again or
    /// forgotten is skipped), for forgetting the oldest in constant time.
    private var order: [(token: String, serial: UInt64)] = []
    private var head = 0
    private var serial: UInt64 = 0
    private var waiters: [String: [(key: UInt64, owner: String?)]] = [:]
    /// The CURVE keys whose bus connections subscribed each marker (markers seen without a key
    /// have none).
    private var owners: [String: Set<String>] = [:]
    /// Why the subscriptions sent before a seen marker were refused (only markers with refusals).
    private var refusals: [String: [String]] = [:]

    /// Reads an XPUB notice (`0x01` or `0x00` then the topic); returns the marker token, if any.
    static func token(inNotice notice: [UInt8]) -> (subscribed: Bool, token: String)? {
        guard notice.count > 2, notice[0] <= 1, notice[1] == UInt8(ascii: "!") else { return nil }
        return (notice[0] == 1, String(decoding: notice[2...], as: UTF8.self))
    }

    /// Whether the marker `token` was seen, subscribed by `owner`'s bus connection when the request
    /// comes with a key (under CURVE).
    func hasSeen(_ token: String, by owner: String? = nil) -> Bool {
        guard seen[token] != nil else { return false }
        guard let owner else { return true }
        return owners[token]?.contains(owner) == true
    }

    /// Why the subscriptions sent before the marker `token` (from `owner`'s connection, under CURVE)
    /// were refused: empty when all were applied.
    func refusals(of token: String, by owner: String? = nil) -> [String] {
        refusals[Self.refusalKey(token, owner)] ?? []
    }

    /// Refusals are kept per marker and key: another key's connection says nothing of this one's.
    private static func refusalKey(_ token: String, _ owner: String?) -> String {
        "\(token)\u{0}\(owner ?? "")"
    }

    /// How many entries the order keeps (live and forgotten markers): at most about twice the live.
    var orderCount: Int { order.count - head }

    /// Records a marker subscription, with why the subscriptions sent before it were refused, and
    /// returns the keys of the waits it releases.
    mutating func markerSubscribed(_ token: String, refused: [String] = [], owner: String? = nil, now: UInt64)
        -> [UInt64]
    {
        refusals[Self.refusalKey(token, owner)] = refused.isEmpty ? nil : refused
        if let owner { owners[token, default: []].insert(owner) }
        if seen[token] == nil {
            serial += 1
            seen[token] = serial
            order.append((token, serial))
            while seen.count > Self.capacity, head < order.count {
                let oldest = order[head]
                if seen[oldest.token] == oldest.serial { forgetMarker(oldest.token) }
                head += 1
            }
            compact()
        }
        // A wait from a key is released only by that key's marker; one without a key by any.
        let released = waiters[token]?.filter { $0.owner == nil || $0.owner == owner } ?? []
        waiters[token]?.removeAll { $0.owner == nil || $0.owner == owner }
        if waiters[token]?.isEmpty == true { waiters[token] = nil }
        return released.map(\.key)
    }

    /// A marker was unsubscribed (by `owner`'s connection, under CURVE): it is no longer in place for
    /// that key; once no key holds it, it is forgotten. Another key's unsubscription does not take
    /// a marker from its owner.
    mutating func markerUnsubscribed(_ token: String, owner: String? = nil) {
        if let owner, var holders = owners[token] {
            holders.remove(owner)
            refusals[Self.refusalKey(token, owner)] = nil
            if !holders.isEmpty {
                owners[token] = holders
                return
            }
        }
        forgetMarker(token)
        compact()
    }

    private mutating func forgetMarker(_ token: String) {
        seen[token] = nil
        for owner in owners.removeValue(forKey: token) ?? [] { refusals[Self.refusalKey(token, owner)] = nil }
        refusals[Self.refusalKey(token, nil)] = nil
    }

    /// Drops the order entries of forgotten markers once they outnumber the live ones.
    private mutating func compact() {
        guard order.count - head > 2 * seen.count + 64 else { return }
        order = order[head...].filter { seen[$0.token] == $0.serial }
        head = 0
    }

    /// Parks the wait `key` until `token` is seen (subscribed by `owner`'s connection, when given).
    mutating func wait(for token: String, key: UInt64, owner: String? = nil) {
        waiters[token, default: []].append((key, owner))
    }

    /// Gives up the wait `key` for `token`.
    mutating func forget(_ token: String, key: UInt64) {
        waiters[token]?.removeAll { $0.key == key }
        if waiters[token]?.isEmpty == true { waiters[token] = nil }
    }
}
