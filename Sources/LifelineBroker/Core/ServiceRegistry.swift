import LifelineProtocol

/// The Context's registry of services: names are unique, each name belongs to one peer (a ROUTER
/// routing id) and, with CURVE, to the public key that registered it; a service silent for
/// `interval × liveness` expires. Pure: time comes in as monotonic nanoseconds.
struct ServiceRegistry {
    struct Entry {
        var registration: ServiceRegistration
        var peer: [UInt8]
        /// The CURVE public key (Z85) that registered the name; nil without CURVE.
        var owner: String? = nil
        var registeredAt: UInt64
        var lastSeen: UInt64
        /// Registration order, for dispatch ties.
        var order: UInt64 = 0
        /// Events the service's handlers' queue dropped, as its last heartbeat said.
        var dropped: UInt64 = 0
        /// Events waiting for its handlers, and those they ran by name, as its last heartbeat said.
        var queued: UInt64 = 0
        var handled: [String: UInt64] = [:]
        /// Payloads its typed handlers could not decode, as its last heartbeat said.
        var undecodable: UInt64 = 0

        func expires(at now: UInt64) -> Bool { now > lastSeen &+ registration.heartbeat.expiryNanoseconds }
        var expiryTime: UInt64 { lastSeen &+ registration.heartbeat.expiryNanoseconds }
    }

    /// What happened to a registration attempt.
    enum Admission: Equatable {
        /// A new name.
        case added
        /// The same instance registered again (after a reconnect): routing id and details updated.
        case renewed
        /// Another live instance holds the name.
        case refused(String, retryAfterMilliseconds: Int64)
        /// Another key owns the name (CURVE): whatever the request quotes, it may not take it.
        case foreign(owner: String?)
    }

    private(set) var entries: [String: Entry] = [:]
    private var namesByPeer: [[UInt8]: Set<String>] = [:]
    /// Each entry's ``Entry/expiryTime``, kept apart: the broker's loop asks for the earliest on every
    /// turn, and reading it from the entries copies each one.
    private var expiryTimes: [String: UInt64] = [:]
    private var subscribers: [EventName: Int] = [:]
    private var registrations: UInt64 = 0

    var count: Int { entries.count }
    var isEmpty: Bool { entries.isEmpty }

    func entry(named name: String) -> Entry? { entries[name] }
    func isKnown(peer: [UInt8]) -> Bool { namesByPeer[peer] != nil }

    /// How many names `peer` owns.
    func nameCount(of peer: [UInt8]) -> Int { namesByPeer[peer]?.count ?? 0 }

    /// Every peer that owns at least one name.
    var peers: Dictionary<[UInt8], Set<String>>.Keys { namesByPeer.keys }

    /// Adds or renews `registration` for `peer`, which authenticated with the public key `owner`
    /// (nil without CURVE), or says why not. A name is renewed only by its owner: with CURVE the same
    /// key and the same instance; without it the same connection, or a new connection of the same
    /// process coming back (same instance, pid and host).
    mutating func admit(
        _ registration: ServiceRegistration, peer: [UInt8], owner: String? = nil, now: UInt64
    ) -> Admission {
        if let existing = entries[registration.name] {
            if let refusal = refusal(of: registration, peer: peer, owner: owner, now: now) { return refusal }
            detach(name: registration.name, from: existing.peer)
            count(existing.registration.events, by: -1)
            count(registration.events, by: 1)
            entries[registration.name] = Entry(
                registration: registration, peer: peer, owner: owner, registeredAt: existing.registeredAt,
                lastSeen: now, order: existing.order)
            expiryTimes[registration.name] = now &+ registration.heartbeat.expiryNanoseconds
            namesByPeer[peer, default: []].insert(registration.name)
            return .renewed
        }
        registrations += 1
        entries[registration.name] = Entry(
            registration: registration, peer: peer, owner: owner, registeredAt: now, lastSeen: now,
            order: registrations)
        expiryTimes[registration.name] = now &+ registration.heartbeat.expiryNanoseconds
        namesByPeer[peer, default: []].insert(registration.name)
        count(registration.events, by: 1)
        return .added
    }

    /// Why `registration` may not take its name now (``Admission/refused(_:retryAfterMilliseconds:)``
    /// or ``Admission/foreign(owner:)``); nil when ``admit(_:peer:owner:now:)`` would add or renew it.
    func refusal(of registration: ServiceRegistration, peer: [UInt8], owner: String?, now: UInt64)
        -> Admission?
    {
        guard let existing = entries[registration.name] else { return nil }
        guard existing.owner == owner else { return .foreign(owner: existing.owner) }
        let held = existing.registration
        let sameProcess =
            held.instance == registration.instance
            && (existing.peer == peer || owner != nil
                || (held.pid == registration.pid && held.host == registration.host))
        if sameProcess { return nil }
        let silence = (now &- existing.lastSeen) / 1_000_000
        let expiry = Int64(held.heartbeat.expiryNanoseconds / 1_000_000)
        return .refused(
            "service '\(registration.name)' is already registered by pid \(held.pid) on host '\(held.host)' "
                + "(last heard from \(silence) ms ago); choose another name or stop that process first",
            retryAfterMilliseconds: max(0, expiry - Int64(silence)))
    }

    /// Removes `name`; returns its entry.
    @discardableResult
    mutating func remove(_ name: String) -> Entry? {
        guard let entry = entries.removeValue(forKey: name) else { return nil }
        expiryTimes[name] = nil
        detach(name: name, from: entry.peer)
        count(entry.registration.events, by: -1)
        return entry
    }

    private mutating func detach(name: String, from peer: [UInt8]) {
        namesByPeer[peer]?.remove(name)
        if namesByPeer[peer]?.isEmpty == true { namesByPeer[peer] = nil }
    }

    /// Records what `peer`'s heartbeat says of its handlers: dropped, queued, run per event, and
    /// payloads that did not decode.
    mutating func report(
        dropped: UInt64?, queued: UInt64?, handled: [String: UInt64]?, undecodable: UInt64? = nil,
        peer: [UInt8]
    ) {
        for name in namesByPeer[peer] ?? [] {
            if let dropped { entries[name]?.dropped = dropped }
            if let undecodable { entries[name]?.undecodable = undecodable }
            entries[name]?.queued = queued ?? 0
            if let handled { entries[name]?.handled = handled }
        }
    }

    /// Records that `peer` is alive; returns false when it owns no name.
    @discardableResult
    mutating func touch(peer: [UInt8], now: UInt64) -> Bool {
        guard let names = namesByPeer[peer] else { return false }
        for name in names {
            guard let index = entries.index(forKey: name) else { continue }
            expiryTimes[name] = Self.see(&entries.values[index], at: now)
        }
        return true
    }

    /// Marks `entry` seen at `now` in place; returns when it would expire.
    private static func see(_ entry: inout Entry, at now: UInt64) -> UInt64 {
        entry.lastSeen = now
        return entry.expiryTime
    }

    /// Removes and returns every entry silent for longer than its `interval × liveness`.
    mutating func removeExpired(now: UInt64) -> [Entry] {
        let names = expiryTimes.compactMap { name, expiry in now > expiry ? name : nil }
        let expired = names.compactMap { remove($0) }
        return expired.sorted { $0.registration.name < $1.registration.name }
    }

    /// When the next entry would expire.
    var nextExpiry: UInt64? { expiryTimes.values.min() }

    private mutating func count(_ events: [EventName], by delta: Int) {
        for event in events {
            let value = (subscribers[event] ?? 0) + delta
            subscribers[event] = value == 0 ? nil : value
        }
    }

    /// The services that handle `event`, in dispatch order: priority for the event (higher first), then
    /// registration order.
    func handlers(of event: EventName) -> [Entry] {
        entries.values.filter { $0.registration.events.contains(event) }.sorted {
            let (left, right) = ($0.registration.priority(for: event), $1.registration.priority(for: event))
            return left != right ? left > right : $0.order < $1.order
        }
    }

    /// How many registered services subscribe to `event`.
    func subscriberCount(of event: EventName) -> Int { subscribers[event] ?? 0 }
}
