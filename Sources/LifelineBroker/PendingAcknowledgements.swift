import LifelineProtocol

/// Published events that wait for their subscribers' acknowledgements before the publisher is answered.
struct PendingAcknowledgements {
    struct Waiting {
        var client: [UInt8]
        var requestID: [UInt8]
        var event: EventName
        var sequence: UInt64
        var epoch: UInt64
        /// The application's lifecycle state once the event was published.
        var lifecycle: LifecycleState
        var subscribers: Int
        var deadline: UInt64
        var timeoutMilliseconds: Int
        /// Service name → the peer it was registered from when the event was published.
        var expected: [String: [UInt8]]
        var acknowledged: [String] = []
        var failed: [(service: String, error: String)] = []
        var missing: [(service: String, reason: String)] = []
    }

    private(set) var waiting: [UInt64: Waiting] = [:]

    mutating func add(_ entry: Waiting) { waiting[entry.sequence] = entry }

    /// Records an acknowledgement; returns the entry when it is complete.
    mutating func acknowledge(sequence: UInt64, service: String, peer: [UInt8], error: String?) -> Waiting? {
        guard var entry = waiting[sequence], entry.expected[service] == peer else { return nil }
        entry.expected[service] = nil
        if let error { entry.failed.append((service, error)) } else { entry.acknowledged.append(service) }
        return settle(entry)
    }

    /// `service` is gone: every event waiting on it counts it as missing. Returns completed entries.
    mutating func serviceGone(_ service: String, reason: String) -> [Waiting] {
        var done: [Waiting] = []
        for (sequence, var entry) in waiting where entry.expected[service] != nil {
            entry.expected[service] = nil
            entry.missing.append((service, reason))
            waiting[sequence] = entry
            if let complete = settle(entry) { done.append(complete) }
        }
        return done.sorted { $0.sequence < $1.sequence }
    }

    /// Entries whose deadline passed, with the silent subscribers marked missing.
    mutating func removeExpired(now: UInt64) -> [Waiting] {
        var done: [Waiting] = []
        for (sequence, var entry) in waiting where entry.deadline <= now {
            for service in entry.expected.keys.sorted() {
                entry.missing.append((service, "no acknowledgement within \(entry.timeoutMilliseconds) ms"))
            }
            entry.expected.removeAll()
            waiting[sequence] = nil
            done.append(entry)
        }
        return done.sorted { $0.sequence < $1.sequence }
    }

    private mutating func settle(_ entry: Waiting) -> Waiting? {
        if entry.expected.isEmpty {
            waiting[entry.sequence] = nil
            return entry
        }
        waiting[entry.sequence] = entry
        return nil
    }

    var nextDeadline: UInt64? { waiting.values.lazy.map(\.deadline).min() }

    /// The publisher's reply body.
    static func body(of entry: Waiting) -> JSONValue {
        [
            "event": .string(entry.event.rawValue), "sequence": .int(Int64(entry.sequence)),
            "epoch": .int(Int64(entry.epoch)), "lifecycle": .string(entry.lifecycle.rawValue),
            "subscribers": .int(Int64(entry.subscribers)),
            "acknowledged": .array(entry.acknowledged.sorted().map { .string($0) }),
            "failed": .array(
                entry.failed.sorted { $0.service < $1.service }.map {
                    ["service": .string($0.service), "error": .string($0.error)]
                }),
            "missing": .array(
                entry.missing.sorted { $0.service < $1.service }.map {
                    ["service": .string($0.service), "reason": .string($0.reason)]
                }),
        ]
    }
}
