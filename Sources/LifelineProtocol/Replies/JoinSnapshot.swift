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
    /// Why bus subscriptions were refused (an ATTACH reply's `refused`).
    package var refused: [String]?

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
}

extension JoinSnapshot: WireRecord {
    package static var blank: JoinSnapshot {
        JoinSnapshot(
            epoch: 0, sequence: 0, lifecycle: .notRunning, bus: "", heartbeat: .standard,
            topics: TopicPositions())
    }
    package static var recordName: String { "the REGISTER reply" }

    package mutating func visit<Visitor: HeaderVisitor>(_ visitor: inout Visitor) throws(Visitor.Failure) {
        try visitor.field("bus", &bus, default: "")
        try visitor.field("epoch", &epoch, bitPattern: true)
        try visitor.field("gap", record: &gap)
        try visitor.field("heartbeat", record: &heartbeat, default: .standard)
        try visitor.field("lifecycle", &lifecycle, default: .notRunning)
        try visitor.field("refused", optionalList: &refused)
        try visitor.field("replayed", &replayed, in: 0...Int.max)
        try visitor.field("sequence", &sequence, bitPattern: false)
        try visitor.field("topics", records: &topics.positions)
    }
}
