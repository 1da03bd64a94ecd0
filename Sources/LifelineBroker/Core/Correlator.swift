import Glibc
import LifelineProtocol

/// Every request the broker waits on, in one id space with one deadline heap: requests it sent to a
/// peer (a forwarded CALL, an OFFER, APP, INTERCEPT, START, BOOT) and requests it holds for a
/// client (an acknowledged PUBLISH, an ATTACH, a boot waiting for its services). A reply is routed
/// by one lookup — and only when it comes from the peer the request went to — and every wait expires
/// through ``removeExpired(now:)``.
struct Correlator {
    /// Which feature a wait belongs to.
    enum Owner: Hashable, Sendable {
        case registry, services, publish, dispatch, apps, boot
    }

    /// One wait: the feature that owns it and what the feature filed it under.
    struct Entry: Equatable {
        let id: [UInt8]
        let owner: Owner
        /// The feature's own key (a call, an offer, a task …).
        let key: UInt64
        /// The peer expected to answer; nil for waits no peer answers (timers).
        let peer: [UInt8]?
        let deadline: MonotonicInstant?
    }

    private var entries: [[UInt8]: Entry] = [:]
    private var ids: [Owner: [UInt64: [UInt8]]] = [:]
    private var deadlines = DeadlineHeap<[UInt8]>()
    private var random = RandomPool()

    var count: Int { entries.count }

    /// Files a wait and returns its id: 16 random hex digits, so no peer can guess another's.
    @discardableResult
    mutating func open(
        _ owner: Owner, key: UInt64, peer: [UInt8]?, deadline: MonotonicInstant?
    ) -> [UInt8] {
        var id: [UInt8]
        repeat { id = Self.hex(random.next()) } while entries[id] != nil
        entries[id] = Entry(id: id, owner: owner, key: key, peer: peer, deadline: deadline)
        ids[owner, default: [:]][key] = id
        if let deadline { deadlines.schedule(id, at: deadline) }
        return id
    }

    /// The wait answered by a reply with `id` from `peer`, removed; nil when there is none or it
    /// went to another peer (``isForeign(_:from:)`` tells which).
    mutating func take(_ id: [UInt8], from peer: [UInt8]) -> Entry? {
        guard let entry = entries[id], entry.peer == peer else { return nil }
        return close(id)
    }

    /// True when `id` is waiting on a peer other than `peer`.
    func isForeign(_ id: [UInt8], from peer: [UInt8]) -> Bool {
        guard let entry = entries[id] else { return false }
        return entry.peer != peer
    }

    /// Removes a wait (answered some other way, or given up).
    @discardableResult
    mutating func close(_ id: [UInt8]) -> Entry? {
        guard let entry = entries.removeValue(forKey: id) else { return nil }
        ids[entry.owner]?[entry.key] = nil
        deadlines.cancel(id)
        return entry
    }

    /// A peer came back on a new connection (same instance, new routing id): the waits its old
    /// connection was to answer are answered from the new one.
    mutating func repoint(from old: [UInt8], to new: [UInt8]) {
        guard old != new else { return }
        for (id, entry) in entries where entry.peer == old {
            entries[id] = Entry(
                id: id, owner: entry.owner, key: entry.key, peer: new, deadline: entry.deadline)
        }
    }

    /// Removes the wait `owner` filed under `key` (a feature giving up on it). Keys are unique per
    /// owner.
    mutating func close(owner: Owner, key: UInt64) {
        guard let id = ids[owner]?[key] else { return }
        close(id)
    }

    /// Removes and returns the waits whose deadline has passed, earliest first.
    mutating func removeExpired(now: MonotonicInstant) -> [Entry] {
        deadlines.popDue(now: now).compactMap { id in
            guard let entry = entries.removeValue(forKey: id) else { return nil }
            ids[entry.owner]?[entry.key] = nil
            return entry
        }
    }

    /// The earliest deadline of any wait.
    mutating func nextDeadline() -> MonotonicInstant? { deadlines.peek() }

    private static func hex(_ value: UInt64) -> [UInt8] {
        let digits = Array("0123456789abcdef".utf8)
        return (0..<16).map { digits[Int((value >> (60 - 4 * UInt64($0))) & 0xF)] }
    }
}

/// Random 64-bit values from the kernel, fetched 512 at a time from `/dev/urandom`: one read per 512
/// ids instead of one system call per id.
struct RandomPool {
    private var values = [UInt64](repeating: 0, count: 512)
    private var position = 512

    mutating func next() -> UInt64 {
        if position == values.count {
            let source = open("/dev/urandom", O_RDONLY | O_CLOEXEC)
            let filled =
                source < 0 ? -1 : values.withUnsafeMutableBytes { read(source, $0.baseAddress, $0.count) }
            if source >= 0 { close(source) }
            if filled != values.count * 8 {
                var generator = SystemRandomNumberGenerator()
                for index in values.indices { values[index] = generator.next() }
            }
            position = 0
        }
        defer { position += 1 }
        return values[position]
    }
}
