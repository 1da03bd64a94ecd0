import LifelineProtocol

/// The bounded journal of recently published events (the Clone pattern's history): at most
/// `capacity` events and `maximumBytes` of them, none older than `maximumAge`. It also remembers, forever, the last sequence and
/// topic sequence of every event name, which is the state a late joiner starts from.
struct EventJournal {
    struct TopicState: Equatable {
        var sequence: UInt64
        var topicSequence: UInt64
    }

    /// One event held, with what a replay and a durable copy need beside it.
    struct Entry {
        var message: BusMessage
        var recordedAt: UInt64
        var publishID: String?
        var subscribers: Int
        var batch: Int
        /// Its share of ``bytes``.
        var size: Int
    }

    let capacity: Int
    let maximumAge: UInt64
    let maximumBytes: Int
    /// The bytes of the events held (names and payloads).
    private(set) var bytes = 0
    /// The events held from `head` on; those before it were dropped (their payloads freed) and are
    /// removed in one move once they are half the array.
    private var entries: [Entry] = []
    private var head = 0
    /// The last sequence and topic sequence of every name ever published.
    private(set) var topics: [EventName: TopicState] = [:]
    /// The sequence of the last event appended (0 before any).
    private(set) var lastSequence: UInt64 = 0

    init(capacity: Int, maximumAgeMilliseconds: Int, maximumBytes: Int = .max) {
        self.capacity = max(0, capacity)
        self.maximumAge = UInt64(max(0, maximumAgeMilliseconds)) * 1_000_000
        self.maximumBytes = max(0, maximumBytes)
    }

    private static func size(of message: BusMessage) -> Int {
        message.name.rawValue.utf8.count + message.payload.count + BusHeader.size
    }

    /// Drops the oldest event: its payload and publication id are freed in place (no copy of the
    /// entry); the slot stays until the next compaction.
    private mutating func dropOldest() {
        bytes -= entries[head].size
        entries[head].message.payload = []
        entries[head].publishID = nil
        head += 1
    }

    var count: Int { entries.count - head }

    /// The sequence of the oldest event still held, or the next sequence when empty.
    var firstRetainedSequence: UInt64 {
        head < entries.count ? entries[head].message.header.sequence : lastSequence + 1
    }

    mutating func append(
        _ message: BusMessage, now: UInt64, publishID: String? = nil, subscribers: Int = 0, batch: Int = 1
    ) {
        noteTopic(of: message)
        hold(message, now: now, publishID: publishID, subscribers: subscribers, batch: batch)
    }

    /// Remembers `message` as the last event of its name.
    mutating func noteTopic(of message: BusMessage) {
        topics[message.name] = TopicState(
            sequence: message.header.sequence, topicSequence: message.header.topicSequence)
    }

    /// Holds `message` without noting it as the last of its name: for a run of one name, whose last
    /// event is noted once (``noteTopic(of:)``).
    mutating func hold(
        _ message: BusMessage, now: UInt64, publishID: String? = nil, subscribers: Int = 0, batch: Int = 1
    ) {
        lastSequence = message.header.sequence
        guard capacity > 0 else { return }
        let size = Self.size(of: message)
        entries.append(
            Entry(
                message: message, recordedAt: now, publishID: publishID, subscribers: subscribers,
                batch: batch,
                size: size))
        bytes += size
        while count > capacity || (bytes > maximumBytes && count > 0) { dropOldest() }
        trim(now: now)
    }

    /// Forgets events older than the maximum age.
    mutating func trim(now: UInt64) {
        while head < entries.count && now &- entries[head].recordedAt > maximumAge { dropOldest() }
        if head > 1024 && head * 2 > entries.count {
            entries.removeFirst(head)
            head = 0
        }
    }

    /// What a durable copy must hold to rebuild this journal (of `epoch`): the last sequence and the
    /// topic positions, then every event still held.
    func records(epoch: UInt64) -> [JournalRecord] {
        [.topics(topics, epoch: epoch, sequence: lastSequence)]
            + entries[head...].map {
                .event($0.message, publishID: $0.publishID, subscribers: $0.subscribers, batch: $0.batch)
            }
    }

    /// Takes back what a durable copy held: topic positions and events (recorded at `now`, minus
    /// their age by the wall clock, so that the age limit keeps counting).
    mutating func restore(_ records: [JournalRecord], now: UInt64, wall: UInt64) {
        for record in records {
            switch record {
            case .topics(let saved, _, let sequence):
                lastSequence = max(lastSequence, sequence)
                topics.merge(saved) { current, saved in current.sequence >= saved.sequence ? current : saved }
            case .event(let message, let publishID, let subscribers, let batch):
                let age = wall &- message.header.publishedWallNanoseconds
                append(
                    message, now: age < now ? now &- age : 0, publishID: publishID, subscribers: subscribers,
                    batch: batch)
            case .sharedCursor, .sharedHandled: break
            }
        }
        lastSequence = max(lastSequence, topics.values.map(\.sequence).max() ?? 0)
        trim(now: now)
    }

    /// True when every event after `sequence` is still held (so a replay from there is complete).
    func covers(after sequence: UInt64) -> Bool {
        sequence >= lastSequence || sequence + 1 >= firstRetainedSequence
    }

    /// The held events after `sequence` whose names are in `names` (all when nil), oldest first.
    func events(after sequence: UInt64, names: Set<EventName>?) -> [BusMessage] {
        var low = head
        var high = entries.count
        while low < high {
            let middle = (low + high) / 2
            if entries[middle].message.header.sequence <= sequence { low = middle + 1 } else { high = middle }
        }
        return entries[low...].lazy.map(\.message).filter { names?.contains($0.name) ?? true }
    }
}
