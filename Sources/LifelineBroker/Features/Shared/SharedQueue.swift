import LifelineProtocol

/// The `shared` events of one service name: each waits here until it is sent to one instance, and
/// stays in flight, with that instance, until it acknowledges. An instance that goes away gives its
/// events in flight back, ahead of the others. It also keeps the name's position (``cursor``) for
/// the durable journal. Pure.
struct SharedQueue {
    /// Held at most (the broker's journal capacity): beyond it the oldest waiting event is dropped.
    let limit: Int
    /// Each event name declared shared, with the sequence after which it is.
    var since: [EventName: UInt64]
    /// Done events (acknowledged or dropped) after the position last written down.
    private var handled: Set<UInt64>
    /// Every event up to here is done or in this queue.
    private var after: UInt64
    /// The sequence of the last event added.
    private var lastAdded: UInt64
    private var waiting: [BusMessage] = []
    private var head = 0
    /// Sent and not acknowledged, by sequence.
    private(set) var inFlight: [UInt64: (peer: [UInt8], message: BusMessage)] = [:]
    /// Events sent (redeliveries included), sent again after their instance left, and dropped
    /// because the queue was full.
    private(set) var sent: UInt64 = 0
    private(set) var redelivered: UInt64 = 0
    private(set) var dropped: UInt64 = 0
    /// Sequences given back by a departed instance: their next send is a redelivery.
    private var given: Set<UInt64> = []

    /// A queue that goes on from `cursor` (a new name's has no events done and starts now).
    init(limit: Int, cursor: SharedCursor) {
        self.limit = max(1, limit)
        since = cursor.since
        handled = cursor.handled
        after = cursor.after
        lastAdded = cursor.after
    }

    /// Where the name stands: every event up to the oldest one waiting or in flight is done.
    func cursor(name: String) -> SharedCursor {
        let pending = (waiting[head...].lazy.map(\.header.sequence) + inFlight.keys).min()
        let position = pending.map { $0 - 1 } ?? max(after, lastAdded)
        return SharedCursor(
            name: name, after: position, since: since, handled: handled.filter { $0 > position })
    }

    var waitingCount: Int { waiting.count - head }

    /// Queues a published event; returns the one dropped to make room, if any.
    mutating func add(_ message: BusMessage) -> BusMessage? {
        var droppedMessage: BusMessage?
        if waitingCount >= limit {
            droppedMessage = waiting[head]
            handled.insert(waiting[head].header.sequence)
            head += 1
            dropped += 1
        }
        waiting.append(message)
        lastAdded = max(lastAdded, message.header.sequence)
        compact()
        return droppedMessage
    }

    /// The next event to send, taken off the queue.
    mutating func take() -> BusMessage? {
        guard head < waiting.count else { return nil }
        let message = waiting[head]
        head += 1
        compact()
        return message
    }

    /// `message` went to the instance on `peer`.
    mutating func sent(_ message: BusMessage, to peer: [UInt8]) {
        inFlight[message.header.sequence] = (peer, message)
        sent += 1
        if given.remove(message.header.sequence) != nil { redelivered += 1 }
    }

    /// The instance on `peer` acknowledged `sequence`; false when it was not in flight to it.
    mutating func acknowledge(_ sequence: UInt64, from peer: [UInt8]) -> Bool {
        guard inFlight[sequence]?.peer == peer else { return false }
        inFlight[sequence] = nil
        handled.insert(sequence)
        if handled.count > 2 * limit + 1024 {
            let position = cursor(name: "")
            after = position.after
            handled = position.handled
        }
        return true
    }

    /// How many events are in flight to `peer`.
    func inFlight(to peer: [UInt8]) -> Int { inFlight.values.reduce(0) { $0 + ($1.peer == peer ? 1 : 0) } }

    /// The events in flight to `peer` (or to anyone, when nil) go back to the front of the queue, in
    /// order; returns how many.
    @discardableResult
    mutating func giveBack(from peer: [UInt8]?) -> Int {
        let back = inFlight.values.filter { peer == nil || $0.peer == peer }.map(\.message)
            .sorted { $0.header.sequence < $1.header.sequence }
        guard !back.isEmpty else { return 0 }
        for message in back {
            inFlight[message.header.sequence] = nil
            given.insert(message.header.sequence)
        }
        waiting = back + waiting[head...]
        head = 0
        return back.count
    }

    private mutating func compact() {
        if head > 1024 && head * 2 > waiting.count {
            waiting.removeFirst(head)
            head = 0
        }
    }
}
