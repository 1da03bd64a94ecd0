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

    package init(json: JSONValue) {
        event = EventName(rawValue: json["event"]?.stringValue ?? "")
        sequence = UInt64(max(0, json["sequence"]?.intValue ?? 0))
        epoch = UInt64(bitPattern: json["epoch"]?.intValue ?? 0)
        subscribers = Int(json["subscribers"]?.intValue ?? 0)
        lifecycle = json["lifecycle"]?.stringValue.flatMap(LifecycleState.init(rawValue:))
        acknowledged = json["acknowledged"]?.arrayValue?.compactMap(\.stringValue)
        failed = (json["failed"]?.arrayValue ?? []).map {
            Failure(service: $0["service"]?.stringValue ?? "", error: $0["error"]?.stringValue ?? "")
        }
        missing = (json["missing"]?.arrayValue ?? []).map {
            Missing(service: $0["service"]?.stringValue ?? "", reason: $0["reason"]?.stringValue ?? "")
        }
        count = Int(json["count"]?.intValue ?? 1)
        subscribersByEvent = json["subscribersByEvent"]?.objectValue?.compactMapValues {
            $0.intValue.map(Int.init)
        }
    }

    /// The reply body, keys in a fixed order (the hot path writes it without building a tree).
    package var body: [UInt8] {
        if acknowledged == nil && count <= 1 && subscribersByEvent == nil, let plain = plainBody() {
            return plain
        }
        var writer = JSONObjectWriter()
        if let acknowledged {
            writer.add("acknowledged", .array(acknowledged.sorted().map { .string($0) }))
        }
        if count > 1 { writer.add("count", Int64(count)) }
        writer.add("epoch", Int64(bitPattern: epoch))
        writer.add("event", event.rawValue)
        if acknowledged != nil {
            writer.add(
                "failed",
                .array(
                    failed.sorted { $0.service < $1.service }.map {
                        ["service": .string($0.service), "error": .string($0.error)]
                    }))
        }
        if count > 1 { writer.add("firstSequence", Int64(bitPattern: firstSequence)) }
        if let lifecycle { writer.add("lifecycle", lifecycle.rawValue) }
        if acknowledged != nil {
            writer.add(
                "missing",
                .array(
                    missing.sorted { $0.service < $1.service }.map {
                        ["service": .string($0.service), "reason": .string($0.reason)]
                    }))
        }
        writer.add("sequence", Int64(bitPattern: sequence))
        writer.add("subscribers", Int64(subscribers))
        if let subscribersByEvent {
            writer.add(
                "subscribersByEvent", .object(subscribersByEvent.mapValues { .int(Int64($0)) }))
        }
        return writer.finish()
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
