/// The REPLAY reply: how many events were sent, or the gap that could not be filled.
package struct ReplayResult: Sendable, Equatable {
    public var epoch: UInt64
    public var sequence: UInt64
    public var topics: TopicPositions
    public var replayed: Int?
    public var gap: GapNotice?

    public init(epoch: UInt64, sequence: UInt64, topics: TopicPositions, replayed: Int?, gap: GapNotice?) {
        self.epoch = epoch
        self.sequence = sequence
        self.topics = topics
        self.replayed = replayed
        self.gap = gap
    }
}

extension ReplayResult: WireRecord {
    package static var blank: ReplayResult {
        ReplayResult(epoch: 0, sequence: 0, topics: TopicPositions(), replayed: nil, gap: nil)
    }
    package static var recordName: String { "the REPLAY reply" }

    package mutating func visit<Visitor: HeaderVisitor>(_ visitor: inout Visitor) throws(Visitor.Failure) {
        try visitor.field("epoch", &epoch, default: 0, bitPattern: true)
        try visitor.field("gap", record: &gap)
        try visitor.field("replayed", &replayed, in: 0...Int.max)
        try visitor.field("sequence", &sequence, default: 0, bitPattern: false)
        try visitor.field("topics", records: &topics.positions)
    }
}
