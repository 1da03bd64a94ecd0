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

    public init(json: JSONValue) {
        epoch = UInt64(bitPattern: json["epoch"]?.intValue ?? 0)
        sequence = UInt64(max(0, json["sequence"]?.intValue ?? 0))
        topics = TopicPositions(json: json["topics"])
        replayed = json["replayed"]?.intValue.map { Int($0) }
        gap = json["gap"].map(GapNotice.init(json:))
    }

    public var json: JSONValue {
        var members: [String: JSONValue] = [
            "epoch": .int(Int64(epoch)), "sequence": .int(Int64(sequence)), "topics": topics.json,
        ]
        if let replayed { members["replayed"] = .int(Int64(replayed)) }
        if let gap { members["gap"] = gap.json }
        return .object(members)
    }
}
