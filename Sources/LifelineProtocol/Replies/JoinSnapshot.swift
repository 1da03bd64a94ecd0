/// The REGISTER reply: the snapshot a service starts from, and what became of its resume cursor.
package struct JoinSnapshot: Sendable, Equatable {
    public var epoch: UInt64
    /// The last event the snapshot covers: events up to it are not delivered live.
    public var sequence: UInt64
    public var lifecycle: LifecycleState
    public var bus: String
    /// The broker's heartbeat rules.
    public var heartbeat: HeartbeatSettings
    public var topics: TopicPositions
    /// How many journal events were sent before this reply (a resume that could be served).
    public var replayed: Int?
    /// What could not be replayed (a resume that could not be served).
    public var gap: GapNotice?

    public init(
        epoch: UInt64, sequence: UInt64, lifecycle: LifecycleState, bus: String, heartbeat: HeartbeatSettings,
        topics: TopicPositions, replayed: Int? = nil, gap: GapNotice? = nil
    ) {
        self.epoch = epoch
        self.sequence = sequence
        self.lifecycle = lifecycle
        self.bus = bus
        self.heartbeat = heartbeat
        self.topics = topics
        self.replayed = replayed
        self.gap = gap
    }

    public init(json: JSONValue) throws(ProtocolError) {
        guard let epoch = json["epoch"]?.intValue, let sequence = json["sequence"]?.intValue else {
            throw ProtocolError(.badRequest, "the REGISTER reply lacks 'epoch' or 'sequence'")
        }
        self.epoch = UInt64(bitPattern: epoch)
        self.sequence = UInt64(max(0, sequence))
        lifecycle = json["lifecycle"]?.stringValue.flatMap(LifecycleState.init(rawValue:)) ?? .notRunning
        bus = json["bus"]?.stringValue ?? ""
        heartbeat = (try? HeartbeatSettings(json: json["heartbeat"] ?? .null)) ?? .standard
        topics = TopicPositions(json: json["topics"])
        replayed = json["replayed"]?.intValue.map { Int($0) }
        gap = json["gap"].map(GapNotice.init(json:))
    }

    public var json: JSONValue {
        var members: [String: JSONValue] = [
            "epoch": .int(Int64(epoch)), "sequence": .int(Int64(sequence)),
            "lifecycle": .string(lifecycle.rawValue),
            "bus": .string(bus), "heartbeat": heartbeat.json, "topics": topics.json,
        ]
        if let replayed { members["replayed"] = .int(Int64(replayed)) }
        if let gap { members["gap"] = gap.json }
        return .object(members)
    }
}
