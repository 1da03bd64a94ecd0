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

    /// Waits by the value their id is the hex digits of (a `[UInt8]` key would be hashed byte by byte
    /// on every reply).
    private var entries: [UInt64: Entry] = [:]
    private var ids: [Owner: [UInt64: UInt64]] = [:]
    private var deadlines = DeadlineHeap<UInt64>()
    private var random = RandomPool()

    var count: Int { entries.count }

    /// Files a wait and returns its id: 16 random hex digits, so no peer can guess another's.
    @discardableResult
    mutating func open(
        _ owner: Owner, key: UInt64, peer: [UInt8]?, deadline: MonotonicInstant?
    ) -> [UInt8] {
        var value: UInt64
        repeat { value = random.next() } while entries[value] != nil
        let id = Self.hex(value)
        entries[value] = Entry(id: id, owner: owner, key: key, peer: peer, deadline: deadline)
        ids[owner, default: [:]][key] = value
        if let deadline { deadlines.schedule(value, at: deadline) }
        return id
    }

    /// The wait answered by a reply with `id` from `peer`, removed; nil when there is none or it
    /// went to another peer (``isForeign(_:from:)`` tells which).
    mutating func take(_ id: [UInt8], from peer: [UInt8]) -> Entry? {
        guard let value = Self.value(of: id), let entry = entries[value], entry.peer == peer else {
            return nil
        }
        return close(value: value)
    }

    /// True when `id` is waiting on a peer other than `peer`.
    func isForeign(_ id: [UInt8], from peer: [UInt8]) -> Bool {
        guard let value = Self.value(of: id), let entry = entries[value] else { return false }
        return entry.peer != peer
    }

    /// Removes a wait (answered some other way, or given up).
    @discardableResult
    mutating func close(_ id: [UInt8]) -> Entry? {
        guard let value = Self.value(of: id) else { return nil }
        return close(value: value)
    }

    @discardableResult
    private mutating func close(value: UInt64) -> Entry? {
        guard let entry = entries.removeValue(forKey: value) else { return nil }
        ids[entry.owner]?[entry.key] = nil
        deadlines.cancel(value)
        return entry
    }

    /// A peer came back on a new connection (same instance, new routing id): the waits its old
    /// connection was to answer are answered from the new one.
    mutating func repoint(from old: [UInt8], to new: [UInt8]) {
        guard old != new else { return }
        for (value, entry) in entries where entry.peer == old {
            entries[value] = Entry(
                id: entry.id, owner: entry.owner, key: entry.key, peer: new, deadline: entry.deadline)
        }
    }

    /// The peer the wait `owner` filed under `key` expects its answer from.
    func peer(owner: Owner, key: UInt64) -> [UInt8]? {
        ids[owner]?[key].flatMap { entries[$0]?.peer }
    }

    /// Removes the wait `owner` filed under `key` (a feature giving up on it). Keys are unique per
    /// owner.
    mutating func close(owner: Owner, key: UInt64) {
        guard let value = ids[owner]?[key] else { return }
        close(value: value)
    }

    /// Removes and returns the waits whose deadline has passed, earliest first.
    mutating func removeExpired(now: MonotonicInstant) -> [Entry] {
        deadlines.popDue(now: now).compactMap { value in
            guard let entry = entries.removeValue(forKey: value) else { return nil }
            ids[entry.owner]?[entry.key] = nil
            return entry
        }
    }

    /// The earliest deadline of any wait.
    mutating func nextDeadline() -> MonotonicInstant? { deadlines.peek() }

    /// The value whose ``hex(_:)`` `id` is; nil for anything this correlator never made.
    private static func value(of id: [UInt8]) -> UInt64? {
        guard id.count == 16 else { return nil }
        var value: UInt64 = 0
        for digit in id {
            switch digit {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): value = value << 4 | UInt64(digit - UInt8(ascii: "0"))
            case UInt8(ascii: "a")...UInt8(ascii: "f"):
                value = value << 4 | UInt64(digit - UInt8(ascii: "a") + 10)
            default: return nil
            }
        }
        return value
    }

    private static func hex(_ value: UInt64) -> [UInt8] {
        // On the stack, then copied from a typed buffer (Array(unsafeUninitializedCapacity:) takes
        // the runtime's unspecialized allocation path on Linux: about 4× the instructions).
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 16) { digits in
            for index in 0..<16 {
                let nibble = UInt8(truncatingIfNeeded: value >> (60 - 4 * UInt64(index))) & 0xF
                digits[index] = nibble < 10 ? UInt8(ascii: "0") + nibble : UInt8(ascii: "a") + nibble - 10
            }
            return Array(UnsafeBufferPointer(digits))
        }
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
