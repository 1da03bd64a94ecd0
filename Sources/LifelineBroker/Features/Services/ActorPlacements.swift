/// Where each actor by key lives: one instance of its service per key, recorded when the first call
/// places it and forgotten only when that instance can no longer run it (it released the key, left
/// cleanly, or its heartbeat window passed). Pure bookkeeping: the rules of when to place and move
/// are ``ServicesFeature``'s.
struct ActorPlacements {
    struct Placement: Equatable {
        /// The instance id of the hosting process.
        var instance: String
        /// Its connection, as the registry last knew it.
        var peer: [UInt8]
        /// When it was placed there (broker monotonic nanoseconds).
        var since: UInt64
        /// Calls sent to it since, and those not answered yet.
        var calls: UInt64 = 0
        var inFlight = 0
        /// Until when (broker monotonic nanoseconds) its instance may still be running a call to it
        /// that the broker stopped waiting for (its instance was cut off with the call on its way).
        var busyUntil: UInt64 = 0
    }

    private struct InstanceRef: Hashable {
        let service: String
        let instance: String
    }

    private(set) var byService: [String: [String: Placement]] = [:]
    private var counts: [InstanceRef: Int] = [:]

    /// How many keys are placed, over every service.
    var count: Int { counts.values.reduce(0, +) }

    func placement(of service: String, key: String) -> Placement? { byService[service]?[key] }

    /// How many keys of `service` are placed on `instance`.
    func activations(of service: String, on instance: String) -> Int {
        counts[InstanceRef(service: service, instance: instance)] ?? 0
    }

    /// Records `key` of `service` on `instance` (connected on `peer`), replacing nothing: a key
    /// already placed stays where it is (returns false).
    @discardableResult
    mutating func place(_ service: String, key: String, on instance: String, peer: [UInt8], now: UInt64)
        -> Bool
    {
        guard byService[service]?[key] == nil else { return false }
        byService[service, default: [:]][key] = Placement(instance: instance, peer: peer, since: now)
        counts[InstanceRef(service: service, instance: instance), default: 0] += 1
        return true
    }

    /// Forgets `key` of `service`; returns where it was.
    @discardableResult
    mutating func forget(_ service: String, key: String) -> Placement? {
        guard let placement = byService[service]?.removeValue(forKey: key) else { return nil }
        if byService[service]?.isEmpty == true { byService[service] = nil }
        let ref = InstanceRef(service: service, instance: placement.instance)
        counts[ref] = (counts[ref] ?? 1) - 1
        if counts[ref] == 0 { counts[ref] = nil }
        return placement
    }

    /// Forgets every key of `service` placed on `instance`; returns them, sorted.
    mutating func forgetAll(of service: String, on instance: String) -> [String] {
        let keys = (byService[service] ?? [:]).filter { $0.value.instance == instance }.keys.sorted()
        for key in keys { forget(service, key: key) }
        return keys
    }

    /// Forgets every key of `service`.
    mutating func forgetAll(of service: String) {
        for key in (byService[service] ?? [:]).keys { forget(service, key: key) }
    }

    /// `instance` of `service` speaks on `peer` now (it registered again after a reconnect).
    mutating func move(_ service: String, instance: String, to peer: [UInt8]) {
        guard let keys = byService[service]?.filter({ $0.value.instance == instance }).keys else { return }
        for key in keys { byService[service]?[key]?.peer = peer }
    }

    /// A call to `key` of `service` on `instance` may run there until `until`.
    mutating func markBusy(_ service: String, key: String, instance: String, until: UInt64) {
        guard var placement = byService[service]?[key], placement.instance == instance else { return }
        placement.busyUntil = max(placement.busyUntil, until)
        byService[service]?[key] = placement
    }

    /// The latest ``Placement/busyUntil`` of the keys of `service` on `instance`.
    func busyUntil(of service: String, on instance: String) -> UInt64 {
        (byService[service] ?? [:]).values.filter { $0.instance == instance }.map(\.busyUntil).max() ?? 0
    }

    /// A call was sent to `key` of `service` (`by` 1) or finished there (`by` -1).
    mutating func count(_ service: String, key: String, instance: String, by delta: Int) {
        guard var placement = byService[service]?[key], placement.instance == instance else { return }
        placement.inFlight = max(0, placement.inFlight + delta)
        if delta > 0 { placement.calls &+= 1 }
        byService[service]?[key] = placement
    }
}
