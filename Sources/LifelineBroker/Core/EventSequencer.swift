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
        next(name, count: 1, flags: flags, wall: wall, monotonic: monotonic)
    }

    /// The header for the first of the next `count` events named `name` (at least one); the others
    /// follow it, one sequence and one topic sequence further each (``BusHeader/following``).
    mutating func next(_ name: EventName, count: Int, flags: UInt64 = 0, wall: UInt64, monotonic: UInt64)
        -> BusHeader
    {
        let count = UInt64(max(1, count))
        let first = sequence &+ 1
        sequence &+= count
        // One lookup of the name for the whole run: the value is counted up where it lies.
        let topic = topicSequences[name, default: 0].countUp(by: count) &- (count &- 1)
        return BusHeader(
            epoch: epoch, sequence: first, topicSequence: topic, flags: flags,
            publishedWallNanoseconds: wall,
            publishedMonotonicNanoseconds: monotonic)
    }
}

extension BusHeader {
    /// The header of the event stamped right after this one, in the same run of one name.
    var following: BusHeader {
        var next = self
        next.sequence &+= 1
        next.topicSequence &+= 1
        return next
    }
}

extension UInt64 {
    /// Adds `count` and returns the new value (through a dictionary's default subscript: one lookup).
    fileprivate mutating func countUp(by count: UInt64) -> UInt64 {
        self &+= count
        return self
    }
}
