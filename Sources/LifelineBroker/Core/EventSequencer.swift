import LifelineProtocol

/// Stamps published events: one epoch per broker life, a global sequence and one per event name,
/// both starting at 1 and strictly increasing.
struct EventSequencer {
    let epoch: UInt64
    private(set) var sequence: UInt64 = 0
    /// The last topic sequence of each name: how many events of it this epoch has published.
    private(set) var topicSequences: [EventName: UInt64] = [:]

    init(epoch: UInt64) { self.epoch = epoch }

    /// Goes on with `epoch` where a durable journal left it.
    init(continuing epoch: UInt64, after sequence: UInt64, topics: [EventName: EventJournal.TopicState]) {
        self.epoch = epoch
        self.sequence = sequence
        topicSequences = topics.mapValues(\.topicSequence)
    }

    /// The header for the next event named `name`.
    mutating func next(_ name: EventName, flags: UInt64 = 0, wall: UInt64, monotonic: UInt64) -> BusHeader {
        sequence += 1
        // One lookup of the name: the value is counted up where it lies.
        let topic = topicSequences[name, default: 0].countUp()
        return BusHeader(
            epoch: epoch, sequence: sequence, topicSequence: topic, flags: flags,
            publishedWallNanoseconds: wall,
            publishedMonotonicNanoseconds: monotonic)
    }
}

extension UInt64 {
    /// Adds one and returns the new value (through a dictionary's default subscript: one lookup).
    fileprivate mutating func countUp() -> UInt64 {
        self += 1
        return self
    }
}
