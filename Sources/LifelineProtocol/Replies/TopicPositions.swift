/// Where the broker stands for some event names: the last sequence and topic sequence of each
/// (names never published are absent). Part of the REGISTER snapshot and of REPLAY answers.
package struct TopicPositions: Sendable, Equatable {
    public struct Position: Sendable, Equatable {
        public var sequence: UInt64
        public var topicSequence: UInt64

        public init(sequence: UInt64, topicSequence: UInt64) {
            self.sequence = sequence
            self.topicSequence = topicSequence
        }
    }

    public var positions: [EventName: Position]

    public init(_ positions: [EventName: Position] = [:]) { self.positions = positions }
}

extension TopicPositions.Position: WireRecord {
    package static var blank: Self { Self(sequence: 0, topicSequence: 0) }
    package static var recordName: String { "a topic position" }

    package mutating func visit<Visitor: HeaderVisitor>(_ visitor: inout Visitor) throws(Visitor.Failure) {
        try visitor.field("sequence", &sequence, default: 0, bitPattern: false)
        try visitor.field("topicSequence", &topicSequence, default: 0, bitPattern: false)
    }
}
