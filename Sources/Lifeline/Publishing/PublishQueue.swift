import LifelineProtocol

/// A client's publications on their way out, coalesced: one PUBLISH is in flight at a time, and
/// whatever is queued while it is goes out together, as one batch, when it is answered. A lone event
/// leaves at once as a plain PUBLISH; a busy publisher's events leave in batches as large as the
/// round trip lets them grow. One PUBLISH at a time keeps the publisher's order even across a broker
/// restart (a lost batch is sent again before anything after it). Pure: the caller sends, locks and
/// resumes.
struct PublishQueue<Waiter, Barrier> {
    /// One event to publish, with who waits for its receipt (nobody for a posted event).
    struct Member {
        var event: PublishedEvent
        var waiter: Waiter?
        /// After it (monotonic nanoseconds), the event is given up.
        var deadline: UInt64
    }

    /// A PUBLISH made of queued members, in order.
    struct Batch {
        var request: PublishRequest
        var members: [Member]

        /// The latest deadline of its members: the batch is sent again until then.
        var deadline: UInt64 { members.lazy.map(\.deadline).max() ?? 0 }
    }

    /// What is queued: an event, or a barrier to release once everything before it is answered.
    enum Entry {
        case publication(Member)
        case barrier(Barrier)
    }

    /// What the caller does next: send `batch`, release `passed`.
    struct Step {
        var batch: Batch?
        var passed: [Barrier] = []
    }

    /// Most events in one PUBLISH.
    let maximumEvents: Int
    /// Most payload bytes in one PUBLISH (a larger event still goes, alone).
    let maximumBytes: Int
    /// Queued events past which a poster waits for room.
    let capacity: Int
    private var entries: [Entry] = []
    private var head = 0
    private var queuedEvents = 0
    /// A batch is in flight (sent, or waiting to be sent again).
    private(set) var busy = false

    init(
        maximumEvents: Int = PublishRequest.maximumBatch, maximumBytes: Int = 4 << 20, capacity: Int = 100_000
    ) {
        self.maximumEvents = max(1, min(maximumEvents, PublishRequest.maximumBatch))
        self.maximumBytes = max(1, maximumBytes)
        self.capacity = max(1, capacity)
    }

    /// Events queued and not yet sent.
    var queued: Int { queuedEvents }
    /// Nothing queued, nothing in flight.
    var isIdle: Bool { !busy && head == entries.count }
    /// A poster may add an event without waiting.
    var hasRoom: Bool { queuedEvents < capacity }

    /// Queues `entry`. When nothing is in flight the returned step sends it at once; a barrier with
    /// nothing before it passes at once.
    mutating func add(_ entry: Entry, makeID: () -> String) -> Step {
        if case .barrier(let barrier) = entry, isIdle { return Step(batch: nil, passed: [barrier]) }
        entries.append(entry)
        if case .publication = entry { queuedEvents += 1 }
        return busy ? Step(batch: nil) : next(makeID: makeID)
    }

    /// The batch in flight is over (answered, refused or given up): the barriers now at the head
    /// pass, and the next batch, if any, goes.
    mutating func batchDone(makeID: () -> String) -> Step {
        busy = false
        return next(makeID: makeID)
    }

    private mutating func next(makeID: () -> String) -> Step {
        var step = Step(batch: nil)
        while head < entries.count, case .barrier(let barrier) = entries[head] {
            step.passed.append(barrier)
            head += 1
        }
        var members: [Member] = []
        var bytes = 0
        while head < entries.count, members.count < maximumEvents,
            case .publication(let member) = entries[head]
        {
            bytes += member.event.payload.count
            if !members.isEmpty && bytes > maximumBytes { break }
            members.append(member)
            head += 1
        }
        queuedEvents -= members.count
        if head == entries.count {
            entries.removeAll(keepingCapacity: entries.capacity <= 4096)
            head = 0
        } else if head >= 4096 && head * 2 >= entries.count {
            entries.removeFirst(head)
            head = 0
        }
        guard !members.isEmpty else { return step }
        busy = true
        let events = members.map(\.event)
        let request =
            events.count == 1
            ? PublishRequest(event: events[0].name, payload: events[0].payload, publishID: makeID())
            : PublishRequest(batch: events, publishID: makeID())
        step.batch = Batch(request: request, members: members)
        return step
    }

    /// Each member's own receipt, cut from the receipt of the PUBLISH that carried them: its name,
    /// its sequence within the batch, the subscribers of its name.
    static func receipts(for members: [Member], from receipt: PublishReceipt) -> [PublishReceipt] {
        guard members.count > 1 else { return [receipt] }
        let first = receipt.sequence &- UInt64(members.count - 1)
        return members.enumerated().map { index, member in
            PublishReceipt(
                event: member.event.name, sequence: first &+ UInt64(index), epoch: receipt.epoch,
                subscribers: receipt.subscribersByEvent?[member.event.name.rawValue] ?? receipt.subscribers,
                lifecycle: receipt.lifecycle)
        }
    }

    /// Whether an event may share a PUBLISH with others: not one that moves the lifecycle or is
    /// acknowledged by its own rule (its receipt would not be its own).
    static func coalesces(_ name: EventName) -> Bool {
        LifecycleState.target(of: name) == nil
            && EventCatalog.descriptor(for: name)?.requiresAcknowledgement != true
    }
}

extension PublishQueue: Sendable where Waiter: Sendable, Barrier: Sendable {}
extension PublishQueue.Member: Sendable where Waiter: Sendable {}
extension PublishQueue.Batch: Sendable where Waiter: Sendable {}
extension PublishQueue.Entry: Sendable where Waiter: Sendable, Barrier: Sendable {}
extension PublishQueue.Step: Sendable where Waiter: Sendable, Barrier: Sendable {}
