import LifelineProtocol

/// The Context's registry of services: names are unique; a name is served by one instance, or by
/// several when they say they are replicable, each a peer (a ROUTER routing id and connection) and,
/// with CURVE, all of the public key that registered the name; an instance silent for
/// `interval × liveness` expires, and the name with its last. Pure: time comes in as monotonic
/// nanoseconds.
struct ServiceRegistry {
    /// A registered name and the instances that serve it, in the order they joined (never none).
    struct Entry {
        var instances: [ServiceInstance]
        /// The CURVE public key (Z85) that registered the name; nil without CURVE.
        var owner: String? = nil
        var registeredAt: UInt64
        /// Registration order, for dispatch ties.
        var order: UInt64 = 0

        /// The name's registration: its first instance's. Every instance shares what the name
        /// declares (``ServiceRegistration/difference(from:)``).
        var registration: ServiceRegistration { instances[0].registration }
        /// The first instance's connection.
        var peer: [UInt8] { instances[0].peer }
        /// Where what goes to one instance of the name (dispatch steps, START, BOOT) is sent: the
        /// first instance whose connection is open (the first, when none is).
        var servingPeer: [UInt8] { (instances.first { $0.connected } ?? instances[0]).peer }
        var lastSeen: UInt64 { instances.lazy.map(\.lastSeen).max() ?? 0 }
        var dropped: UInt64 { instances.reduce(0) { Self.sum($0, $1.dropped) } }
        var queued: UInt64 { instances.reduce(0) { Self.sum($0, $1.queued) } }
        var undecodable: UInt64 { instances.reduce(0) { Self.sum($0, $1.undecodable) } }
        var failed: UInt64 { instances.reduce(0) { Self.sum($0, $1.failed) } }
        var handled: [String: UInt64] {
            instances.reduce(into: [:]) { total, instance in
                total.merge(instance.handled, uniquingKeysWith: Self.sum)
            }
        }

        /// Two counts added, held within what the wire carries (a JSON integer, at most Int64.max):
        /// heartbeats report each instance's count as they like, and a sum must not wrap.
        static func sum(_ left: UInt64, _ right: UInt64) -> UInt64 {
            let (total, overflow) = left.addingReportingOverflow(right)
            return overflow ? UInt64(Int64.max) : min(total, UInt64(Int64.max))
        }

        /// The index of the instance on `peer`.
        func index(of peer: [UInt8]) -> Int? { instances.firstIndex { $0.peer == peer } }
    }

    /// What happened to a registration attempt.
    enum Admission: Equatable {
        /// A new name.
        case added
        /// The same instance registered again (after a reconnect): routing id and details updated.
        case renewed
        /// Another instance of a replicable name: it now has `instances`.
        case joined(instances: Int)
        /// Another live instance holds the name.
        case refused(String, retryAfterMilliseconds: Int64)
        /// Another key owns the name (CURVE): whatever the request quotes, it may not take it.
        case foreign(owner: String?)
        /// An instance of a replicable name whose registration differs from the name's.
        case differs(String)
    }

    /// An instance that left, and whether its name left with it (it was the last).
    struct LeftInstance {
        var name: String
        var instance: ServiceInstance
        /// The name's registration, when the name left too.
        var lastOf: ServiceRegistration?
        /// How many instances the name has now.
        var remaining: Int
    }

    /// Names an instance of a name within ``expiryTimes``.
    private struct InstanceKey: Hashable {
        var name: String
        var instance: String
    }

    private(set) var entries: [String: Entry] = [:]
    private var namesByPeer: [[UInt8]: Set<String>] = [:]
    /// Each instance's ``ServiceInstance/expiryTime``, kept apart: the broker's loop asks for the
    /// earliest on every turn, and reading it from the entries copies each one.
    private var expiryTimes: [InstanceKey: UInt64] = [:]
    private var subscribers: [EventName: Int] = [:]
    private var registrations: UInt64 = 0
    /// Per name, how many calls it has balanced: ties between instances go round.
    private var turns: [String: Int] = [:]
    /// Peers whose connection closed while they still serve names (until those expire or move).
    private(set) var cutOffPeers: Set<[UInt8]> = []

    var count: Int { entries.count }
    var isEmpty: Bool { entries.isEmpty }

    func entry(named name: String) -> Entry? { entries[name] }
    func isKnown(peer: [UInt8]) -> Bool { namesByPeer[peer] != nil }
    /// Whether `peer` serves `name` (as any of its instances).
    func holds(_ name: String, peer: [UInt8]) -> Bool { namesByPeer[peer]?.contains(name) == true }

    /// How many names `peer` owns.
    func nameCount(of peer: [UInt8]) -> Int { namesByPeer[peer]?.count ?? 0 }

    /// Every peer that serves at least one name.
    var peers: Dictionary<[UInt8], Set<String>>.Keys { namesByPeer.keys }

    /// Adds or renews `registration` for `peer`, which authenticated with the public key `owner`
    /// (nil without CURVE), or says why not. An instance is renewed only by its owner: with CURVE the
    /// same key and the same instance; without it the same connection, or a new connection of the
    /// same process coming back (same instance, pid and host). Another process joins a name as one
    /// more instance only when both say they are replicable, under the same owner, with the same
    /// declarations.
    mutating func admit(
        _ registration: ServiceRegistration, peer: [UInt8], owner: String? = nil, now: UInt64
    ) -> Admission {
        let name = registration.name
        if var entry = entries[name] {
            if let refusal = refusal(of: registration, peer: peer, owner: owner, now: now) { return refusal }
            let instance = ServiceInstance(
                registration: registration, peer: peer, joinedAt: now, lastSeen: now)
            if let index = entry.instances.firstIndex(where: { $0.id == registration.instance }) {
                let previous = entry.instances[index]
                detach(name: name, from: previous.peer)
                if index == 0 {
                    count(previous.registration.events, by: -1)
                    count(registration.events, by: 1)
                }
                entry.instances[index] = instance
                entry.instances[index].joinedAt = previous.joinedAt
                entry.instances[index].inFlight = previous.inFlight
                entry.instances[index].answered = previous.answered
                entries[name] = entry
                expiryTimes[InstanceKey(name: name, instance: registration.instance)] = instance.expiryTime
                namesByPeer[peer, default: []].insert(name)
                return .renewed
            }
            entry.instances.append(instance)
            entries[name] = entry
            expiryTimes[InstanceKey(name: name, instance: registration.instance)] = instance.expiryTime
            namesByPeer[peer, default: []].insert(name)
            return .joined(instances: entry.instances.count)
        }
        registrations += 1
        let instance = ServiceInstance(registration: registration, peer: peer, joinedAt: now, lastSeen: now)
        entries[name] = Entry(instances: [instance], owner: owner, registeredAt: now, order: registrations)
        expiryTimes[InstanceKey(name: name, instance: registration.instance)] = instance.expiryTime
        namesByPeer[peer, default: []].insert(name)
        count(registration.events, by: 1)
        return .added
    }

    /// Why `registration` may not be admitted now (``Admission/refused(_:retryAfterMilliseconds:)``,
    /// ``Admission/foreign(owner:)`` or ``Admission/differs(_:)``); nil when
    /// ``admit(_:peer:owner:now:)`` would add, renew or join it.
    func refusal(of registration: ServiceRegistration, peer: [UInt8], owner: String?, now: UInt64)
        -> Admission?
    {
        guard let existing = entries[registration.name] else { return nil }
        guard existing.owner == owner else { return .foreign(owner: existing.owner) }
        if let same = existing.instances.first(where: { $0.id == registration.instance }) {
            // An instance back on a connection that serves another instance of the name is refused
            // as a second instance on it would be.
            if same.peer != peer, let other = existing.index(of: peer),
                existing.instances[other].id != registration.instance
            {
                return .differs(Self.oneInstancePerConnection(registration.name))
            }
            let sameProcess =
                same.peer == peer || owner != nil
                || (same.registration.pid == registration.pid && same.registration.host == registration.host)
            if sameProcess {
                guard existing.instances.count > 1,
                    let difference = registration.difference(from: existing.registration)
                else { return nil }
                return .differs(Self.differs(registration, difference))
            }
        } else if existing.registration.replicable || registration.replicable {
            if let difference = registration.difference(from: existing.registration) {
                return .differs(Self.differs(registration, difference))
            }
            if existing.index(of: peer) == nil { return nil }
            return .differs(Self.oneInstancePerConnection(registration.name))
        }
        let held = existing.instances[0]
        let silence = (now &- held.lastSeen) / 1_000_000
        return .refused(
            "service '\(registration.name)' is already registered by pid \(held.registration.pid) on host '\(held.registration.host)' "
                + "(last heard from \(silence) ms ago); choose another name or stop that process first",
            retryAfterMilliseconds: Int64(milliseconds(untilExpiryOf: registration.name, now: now)))
    }

    private static func oneInstancePerConnection(_ name: String) -> String {
        "this connection already serves an instance of '\(name)'; another instance needs its own process"
    }

    private static func differs(_ registration: ServiceRegistration, _ difference: String) -> String {
        "pid \(registration.pid) on '\(registration.host)' may not be an instance of '\(registration.name)': \(difference)"
    }

    /// Removes `name` with every instance; returns its entry.
    @discardableResult
    mutating func remove(_ name: String) -> Entry? {
        guard let entry = entries.removeValue(forKey: name) else { return nil }
        for instance in entry.instances {
            expiryTimes[InstanceKey(name: name, instance: instance.id)] = nil
            detach(name: name, from: instance.peer)
        }
        count(entry.registration.events, by: -1)
        turns[name] = nil
        return entry
    }

    /// Removes the instance of `name` on `peer`; the name goes with its last instance.
    mutating func removeInstance(of name: String, on peer: [UInt8]) -> LeftInstance? {
        guard var entry = entries[name], let index = entry.index(of: peer) else { return nil }
        let instance = entry.instances[index]
        if entry.instances.count == 1 {
            remove(name)
            return LeftInstance(name: name, instance: instance, lastOf: instance.registration, remaining: 0)
        }
        entry.instances.remove(at: index)
        if index == 0 {
            count(instance.registration.events, by: -1)
            count(entry.registration.events, by: 1)
        }
        entries[name] = entry
        expiryTimes[InstanceKey(name: name, instance: instance.id)] = nil
        detach(name: name, from: peer)
        return LeftInstance(name: name, instance: instance, lastOf: nil, remaining: entry.instances.count)
    }

    private mutating func detach(name: String, from peer: [UInt8]) {
        namesByPeer[peer]?.remove(name)
        if namesByPeer[peer]?.isEmpty == true {
            namesByPeer[peer] = nil
            cutOffPeers.remove(peer)
        }
    }

    /// Records what `peer`'s heartbeat says of its handlers: dropped, queued, run per event, and
    /// payloads that did not decode, handlers that threw.
    mutating func report(
        dropped: UInt64?, queued: UInt64?, handled: [String: UInt64]?, undecodable: UInt64? = nil,
        failed: UInt64? = nil, peer: [UInt8]
    ) {
        for name in namesByPeer[peer] ?? [] {
            guard let index = entries[name]?.index(of: peer) else { continue }
            if let dropped { entries[name]?.instances[index].dropped = dropped }
            if let undecodable { entries[name]?.instances[index].undecodable = undecodable }
            if let failed { entries[name]?.instances[index].failed = failed }
            entries[name]?.instances[index].queued = queued ?? 0
            if let handled { entries[name]?.instances[index].handled = handled }
        }
    }

    /// Records that `peer` is alive; returns false when it serves no name.
    @discardableResult
    mutating func touch(peer: [UInt8], now: UInt64) -> Bool {
        guard let names = namesByPeer[peer] else { return false }
        for name in names {
            guard let position = entries.index(forKey: name) else { continue }
            for index in entries.values[position].instances.indices
            where entries.values[position].instances[index].peer == peer {
                entries.values[position].instances[index].lastSeen = now
                let instance = entries.values[position].instances[index]
                expiryTimes[InstanceKey(name: name, instance: instance.id)] = instance.expiryTime
            }
        }
        return true
    }

    /// Removes and returns every instance silent for longer than its `interval × liveness`, by name.
    mutating func removeExpired(now: UInt64) -> [LeftInstance] {
        let due = expiryTimes.compactMap { key, expiry in now > expiry ? key : nil }
        let peers = due.compactMap { key in
            entries[key.name]?.instances.first { $0.id == key.instance }.map { (key.name, $0.peer) }
        }
        let departures = peers.compactMap { removeInstance(of: $0.0, on: $0.1) }
        return departures.sorted { ($0.name, $0.instance.joinedAt) < ($1.name, $1.instance.joinedAt) }
    }

    /// When the next instance would expire.
    var nextExpiry: UInt64? { expiryTimes.values.min() }

    /// How long until the last instance of `name` expires if it stays silent (0 when it is due, or
    /// when there is no such name): an excused absence of the broker's counts.
    func milliseconds(untilExpiryOf name: String, now: UInt64) -> Int {
        guard let entry = entries[name] else { return 0 }
        let expiry =
            entry.instances.compactMap {
                expiryTimes[InstanceKey(name: name, instance: $0.id)]
            }.max() ?? now
        return Int(expiry > now ? (expiry &- now) / 1_000_000 : 0)
    }

    /// Gives every instance a whole heartbeat window from `now` (or what it has, when that is
    /// longer): the broker was not running before `now`, so their heartbeats may still wait unread.
    /// Once per instance between two signs of life: one that has died expires at the latest a
    /// window after the next absence, however often the broker is absent. Returns how many
    /// instances would have expired otherwise.
    mutating func excuseSilence(now: UInt64) -> Int {
        var excused = 0
        for (name, entry) in entries {
            for instance in entry.instances {
                let key = InstanceKey(name: name, instance: instance.id)
                guard let expiry = expiryTimes[key], expiry == instance.expiryTime else { continue }
                if now > expiry { excused += 1 }
                expiryTimes[key] = max(expiry, now &+ instance.registration.heartbeat.expiryNanoseconds)
            }
        }
        return excused
    }

    // MARK: Load

    /// The instance of `name` a call goes to: a connected one with the fewest calls in flight, ties
    /// in turn; nil when none is connected. `excluding` leaves out instances a call already tried.
    mutating func instanceForCall(of name: String, excluding: Set<[UInt8]> = []) -> [UInt8]? {
        guard let entry = entries[name] else { return nil }
        let candidates = entry.instances.filter { $0.connected && !excluding.contains($0.peer) }
        guard let least = candidates.lazy.map(\.inFlight).min() else { return nil }
        let tied = candidates.filter { $0.inFlight == least }
        if tied.count == 1 { return tied[0].peer }
        let turn = turns[name, default: 0]
        turns[name] = turn &+ 1
        return tied[turn % tied.count].peer
    }

    /// Counts a call forwarded to (`by` 1) or answered by (`by` -1) the instance of `name` on `peer`.
    mutating func changeLoad(of name: String, on peer: [UInt8], by delta: Int) {
        guard let index = entries[name]?.index(of: peer) else { return }
        entries[name]?.instances[index].inFlight += delta
    }

    /// Counts a call the instance of `name` on `peer` answered.
    mutating func countAnswer(of name: String, on peer: [UInt8]) {
        guard let index = entries[name]?.index(of: peer) else { return }
        entries[name]?.instances[index].answered &+= 1
    }

    /// Marks every instance on `peer` cut off (its connection closed); returns the names it serves.
    mutating func disconnect(peer: [UInt8]) -> [String] {
        let names = (namesByPeer[peer] ?? []).sorted()
        if !names.isEmpty { cutOffPeers.insert(peer) }
        for name in names {
            guard let index = entries[name]?.index(of: peer) else { continue }
            entries[name]?.instances[index].connected = false
        }
        return names
    }

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

    /// How many registered services subscribe to `event` (a name with several instances counts once).
    func subscriberCount(of event: EventName) -> Int { subscribers[event] ?? 0 }
}
