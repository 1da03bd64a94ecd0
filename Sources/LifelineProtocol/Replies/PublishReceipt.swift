/// The PUBLISH reply: where the event went, and for an acknowledged publish who handled it.
public struct PublishReceipt: Sendable, Equatable {
    /// A subscriber whose handler failed.
    public struct Failure: Sendable, Equatable {
        public var service: String
        public var error: String

        public init(service: String, error: String) {
            self.service = service
            self.error = error
        }
    }

    /// A subscriber that did not acknowledge.
    public struct Missing: Sendable, Equatable {
        public var service: String
        public var reason: String

        public init(service: String, reason: String) {
            self.service = service
            self.reason = reason
        }
    }

    public var event: EventName
    public var sequence: UInt64
    public var epoch: UInt64
    /// How many registered services subscribe to the event.
    public var subscribers: Int
    /// The lifecycle state after the event.
    package var lifecycle: LifecycleState?
    /// Acknowledged publish only: who handled it, who failed, who never answered.
    public var acknowledged: [String]?
    public var failed: [Failure]
    public var missing: [Missing]
    /// A batch: how many events it published (their sequences run from ``firstSequence`` to
    /// ``sequence``); 1 for a single event.
    public var count = 1
    /// A batch: the sequence of its first event.
    public var firstSequence: UInt64 { sequence - UInt64(max(1, count)) + 1 }
    /// A batch of several event names: how many registered services subscribe to each name
    /// (``subscribers`` counts the services subscribed to any of them); nil otherwise.
    public var subscribersByEvent: [String: Int]?

    package init(
        event: EventName, sequence: UInt64, epoch: UInt64, subscribers: Int, lifecycle: LifecycleState?,
        acknowledged: [String]? = nil, failed: [Failure] = [], missing: [Missing] = []
    ) {
        self.event = event
        self.sequence = sequence
        self.epoch = epoch
        self.subscribers = subscribers
        self.lifecycle = lifecycle
        self.acknowledged = acknowledged
        self.failed = failed
        self.missing = missing
    }

    /// The reply body, keys in a fixed order (the hot path writes it without building a tree).
    package var body: [UInt8] {
        if acknowledged == nil && count <= 1 && subscribersByEvent == nil, let plain = plainBody() {
            return plain
        }
        return bytes
    }

    /// The body of an unacknowledged single event (the usual receipt) written at its exact length —
    /// the same bytes as the general path; nil when a name needs escaping.
    private func plainBody() -> [UInt8]? {
        event.rawValue.utf8.withContiguousStorageIfAvailable { name -> [UInt8]? in
            guard !name.contains(where: { $0 < 0x20 || $0 == UInt8(ascii: "\"") || $0 == UInt8(ascii: "\\") })
            else { return nil }
            let (epoch, sequence, subscribers) = (
                Int64(bitPattern: epoch), Int64(bitPattern: sequence), Int64(subscribers)
            )
            let state = lifecycle?.rawValue.utf8
            // {"epoch":E,"event":"N","lifecycle":"L","sequence":S,"subscribers":C}
            var count = 48 + name.count + ByteCursor.digits(of: epoch) + ByteCursor.digits(of: sequence)
            count += ByteCursor.digits(of: subscribers)
            if let state { count += 15 + state.count }
            return ByteCursor.bytes(count: count) { cursor in
                cursor.put(#"{"epoch":"#)
                cursor.put(decimal: epoch)
                cursor.put(#","event":""#)
                cursor.put(name)
                if let state {
                    cursor.put(#"","lifecycle":""#)
                    for byte in state { cursor.put(byte) }
                }
                cursor.put(#"","sequence":"#)
                cursor.put(decimal: sequence)
                cursor.put(#","subscribers":"#)
                cursor.put(decimal: subscribers)
                cursor.put(UInt8(ascii: "}"))
            }
        } ?? nil
    }
}

/// The PUBLISH reply declared once (its usual form is also written and read in place, at its exact
/// length: ``PublishReceipt/body`` and ``PublishReceipt/init(body:)``).
extension PublishReceipt: WireRecord {
    package static var blank: Self { Self(event: "", sequence: 0, epoch: 0, subscribers: 0, lifecycle: nil) }
    package static var recordName: String { "the PUBLISH reply" }

    package mutating func visit<Visitor: HeaderVisitor>(_ visitor: inout Visitor) throws(Visitor.Failure) {
        acknowledged = acknowledged?.sorted()
        try visitor.field("acknowledged", optionalList: &acknowledged)
        var batch: Int? = count > 1 ? count : nil
        try visitor.field("count", &batch, in: 1...Int.max)
        count = batch ?? 1
        try visitor.field("epoch", &epoch, default: 0, bitPattern: true)
        var name = event.rawValue
        try visitor.field("event", &name, default: "")
        event = EventName(rawValue: name)
        if acknowledged != nil {
            failed.sort { $0.service < $1.service }
            try visitor.field("failed", records: &failed)
        }
        // Written for a batch; what a reader makes of it comes from `count` and `sequence`.
        var first: UInt64? = count > 1 ? sequence &- UInt64(count) &+ 1 : nil
        try visitor.field("firstSequence", &first, bitPattern: true)
        // A state this side does not know is no state, not a refusal of the receipt.
        var state = lifecycle?.rawValue
        try visitor.field("lifecycle", tolerant: &state)
        lifecycle = state.flatMap(LifecycleState.init(rawValue:))
        if acknowledged != nil {
            missing.sort { $0.service < $1.service }
            try visitor.field("missing", records: &missing)
        }
        try visitor.field("sequence", &sequence, default: 0, bitPattern: true)
        // Any integer, as the in-place reader takes it (a broker writes a count).
        try visitor.field("subscribers", &subscribers, in: Int.min...Int.max, default: 0)
        var byEvent = subscribersByEvent.map {
            Dictionary(uniqueKeysWithValues: $0.map { (EventName(rawValue: $0.key), $0.value) })
        }
        try visitor.field("subscribersByEvent", &byEvent, in: 0...Int.max)
        subscribersByEvent = byEvent.map {
            Dictionary(uniqueKeysWithValues: $0.map { ($0.key.rawValue, $0.value) })
        }
    }
}

extension PublishReceipt.Failure: WireRecord {
    package static var blank: Self { Self(service: "", error: "") }
    package static var recordName: String { "a failed subscriber" }

    package mutating func visit<Visitor: HeaderVisitor>(_ visitor: inout Visitor) throws(Visitor.Failure) {
        try visitor.field("error", &error, default: "")
        try visitor.field("service", &service, default: "")
    }
}

extension PublishReceipt.Missing: WireRecord {
    package static var blank: Self { Self(service: "", reason: "") }
    package static var recordName: String { "a subscriber that did not acknowledge" }

    package mutating func visit<Visitor: HeaderVisitor>(_ visitor: inout Visitor) throws(Visitor.Failure) {
        try visitor.field("reason", &reason, default: "")
        try visitor.field("service", &service, default: "")
    }
}

extension PublishReceipt: CustomStringConvertible {
    /// One line: the sequence, the subscribers, and for an acknowledged publish who handled it, who
    /// failed and who did not answer.
    public var description: String {
        let numbers = count > 1 ? "\(count) events #\(firstSequence)…#\(sequence)" : "\(event) #\(sequence)"
        var line =
            "published \(numbers) (epoch \(epoch)) to \(subscribers) subscribed service\(subscribers == 1 ? "" : "s")"
        if let acknowledged {
            line +=
                "; acknowledged by " + (acknowledged.isEmpty ? "none" : acknowledged.joined(separator: ", "))
        }
        for failure in failed { line += "; \(failure.service) failed: \(failure.error)" }
        for absent in missing { line += "; \(absent.service) did not acknowledge: \(absent.reason)" }
        return line
    }
}
