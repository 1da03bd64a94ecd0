import LifelineProtocol

/// Stamps published events: one epoch per broker life, a global sequence and one per event name,
/// both starting at 1 and strictly increasing.
struct EventSequencer {
    let epoch: UInt64
    private(set) var sequence: UInt64 = 0
    /// The last topic sequence of each name: how many events of it this epoch has published.
    var topicSequences: [EventName: UInt64] { topics.values }
    private var topics = NameTable<UInt64>()

    init(epoch: UInt64) { self.epoch = epoch }

    /// Goes on with `epoch` where a durable journal left it.
    init(continuing epoch: UInt64, after sequence: UInt64, topics: [EventName: EventJournal.TopicState]) {
        self.epoch = epoch
        self.sequence = sequence
        self.topics = NameTable(topics.mapValues(\.topicSequence))
    }

    /// The header for the next event named `name`.
    mutating func next(_ name: EventName, flags: UInt64 = 0, wall: UInt64, monotonic: UInt64) -> BusHeader {
        sequence += 1
        let topic = topics.update(name, initial: 0) { $0 += 1 }
        return BusHeader(
            epoch: epoch, sequence: sequence, topicSequence: topic, flags: flags,
            publishedWallNanoseconds: wall,
            publishedMonotonicNanoseconds: monotonic)
    }
}
