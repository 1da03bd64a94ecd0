import LifelineProtocol

/// Published events that wait for their subscribers' acknowledgements before the publisher is
/// answered, keyed by sequence. Their deadlines live in the correlator.
struct PendingAcknowledgements {
    struct Waiting {
        var client: [UInt8]
        var requestID: [UInt8]
        /// The correlator wait that bounds it.
        var wait: [UInt8]
        var timeoutMilliseconds: Int
        /// Service name → the peers of its instances when the event was published: every instance
        /// gets the event, and the name has acknowledged it when each has (or left).
        var expected: [String: Set<[UInt8]>]
        /// Names of which an instance acknowledged the event already.
        var answered: Set<String> = []
        /// Names that get the event `shared`: the one instance it went to answers for the name.
        var anyOf: Set<String> = []
        /// The reply, filled in as acknowledgements arrive.
        var receipt: PublishReceipt
        /// The publisher's id, and the repeats of the publication that wait with it.
        var publishID: String?
        var repeats: [(client: [UInt8], requestID: [UInt8])] = []
    }

    private(set) var waiting: [UInt64: Waiting] = [:]

    mutating func add(_ entry: Waiting) { waiting[entry.receipt.sequence] = entry }

    /// A repeat of the publication `sequence` waits for the same reply.
    mutating func addRepeat(of sequence: UInt64, client: [UInt8], requestID: [UInt8]) {
        waiting[sequence]?.repeats.append((client, requestID))
    }

    /// Records an acknowledgement; returns the entry when it is complete.
    mutating func acknowledge(sequence: UInt64, service: String, peer: [UInt8], error: String?) -> Waiting? {
        guard var entry = waiting[sequence] else { return nil }
        if entry.anyOf.remove(service) != nil {
            if let error {
                entry.receipt.failed.append(.init(service: service, error: error))
            } else {
                entry.receipt.acknowledged?.append(service)
            }
            return settle(entry)
        }
        guard entry.expected[service]?.remove(peer) != nil else { return nil }
        if let error {
            // The first failure of any instance is the name's answer.
            entry.expected[service] = nil
            entry.receipt.failed.append(.init(service: service, error: error))
        } else {
            entry.answered.insert(service)
            if entry.expected[service]?.isEmpty == true {
                entry.expected[service] = nil
                entry.receipt.acknowledged?.append(service)
            }
        }
        return settle(entry)
    }

    /// The instance of `service` on `peer` left: the events waiting on it wait for the name's other
    /// instances only; a name left with no instance to answer counts as missing, unless one answered.
    mutating func instanceGone(_ service: String, peer: [UInt8], reason: String) -> [Waiting] {
        var done: [Waiting] = []
        for (_, var entry) in waiting.sorted(by: { $0.key < $1.key })
        where entry.expected[service]?.contains(peer) == true {
            entry.expected[service]?.remove(peer)
            if entry.expected[service]?.isEmpty == true {
                entry.expected[service] = nil
                if entry.answered.contains(service) {
                    entry.receipt.acknowledged?.append(service)
                } else {
                    entry.receipt.missing.append(.init(service: service, reason: reason))
                }
            }
            if let complete = settle(entry) { done.append(complete) }
        }
        return done
    }

    /// `service` is gone: every event waiting on it counts it as missing. Returns completed entries.
    mutating func serviceGone(_ service: String, reason: String) -> [Waiting] {
        var done: [Waiting] = []
        for (_, var entry) in waiting.sorted(by: { $0.key < $1.key })
        where entry.expected[service] != nil || entry.anyOf.contains(service) {
            entry.expected[service] = nil
            entry.anyOf.remove(service)
            entry.receipt.missing.append(.init(service: service, reason: reason))
            if let complete = settle(entry) { done.append(complete) }
        }
        return done
    }

    /// The entry of `sequence`, its deadline passed: the silent subscribers are marked missing.
    mutating func expire(sequence: UInt64) -> Waiting? {
        guard var entry = waiting.removeValue(forKey: sequence) else { return nil }
        for service in Set(entry.expected.keys).union(entry.anyOf).sorted() {
            entry.receipt.missing.append(
                .init(service: service, reason: "no acknowledgement within \(entry.timeoutMilliseconds) ms"))
        }
        entry.expected.removeAll()
        entry.anyOf.removeAll()
        return entry
    }

    private mutating func settle(_ entry: Waiting) -> Waiting? {
        if entry.expected.isEmpty && entry.anyOf.isEmpty {
            waiting[entry.receipt.sequence] = nil
            return entry
        }
        waiting[entry.receipt.sequence] = entry
        return nil
    }
}
