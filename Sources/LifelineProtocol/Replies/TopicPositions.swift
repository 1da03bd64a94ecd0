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

    public init(json: JSONValue?) {
        var positions: [EventName: Position] = [:]
        for (name, state) in json?.objectValue ?? [:] {
            positions[EventName(rawValue: name)] = Position(
                sequence: UInt64(state["sequence"]?.intValue ?? 0),
                topicSequence: UInt64(state["topicSequence"]?.intValue ?? 0))
        }
        self.positions = positions
    }

    public var json: JSONValue {
        .object(
            Dictionary(
                uniqueKeysWithValues: positions.map { name, position in
                    (
                        name.rawValue,
                        [
                            "sequence": .int(Int64(position.sequence)),
                            "topicSequence": .int(Int64(position.topicSequence)),
                        ] as JSONValue
                    )
                }))
    }
}
