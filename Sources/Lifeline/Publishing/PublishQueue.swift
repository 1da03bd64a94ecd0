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
        /// Goes in a PUBLISH of its own, not acknowledged (a posted event that moves the lifecycle or
        /// is acknowledged by its own rule).
        var alone = false
        /// Its deadline passed while its batch was being sent again: its waiter has had the error,
        /// and the batch goes on carrying it (a repeat must hold what the first copy held).
        var givenUp = false
    }

    /// A PUBLISH made of queued members, in order.
    struct Batch {
        var request: PublishRequest
        var members: [Member]

        /// The latest deadline of the members not given up: the batch is sent again until then.
        var deadline: UInt64 {
            var latest: UInt64 = 0
            for index in members.indices where !members[index].givenUp {
                latest = max(latest, members[index].deadline)
            }
            return latest
        }

        /// Whether anyone waits for a member's receipt (posted events need none).
        var hasWaiters: Bool {
            for index in members.indices where members[index].waiter != nil { return true }
            return false
        }
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
        /// Queued members whose deadline passed before they could be sent.
        var expired: [Member] = []
    }

    /// Most events in one PUBLISH.
    let maximumEvents: Int
    /// Most payload bytes in one PUBLISH (a larger event still goes, alone).
    let maximumBytes: Int
    /// Queued events past which a poster waits for room.
    let capacity: Int
    /// Queued entries from `head` on (those before it were taken: nil).
    private var entries: [Entry?] = []
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
    mutating func add(_ entry: consuming Entry, now: UInt64, makeID: () -> String) -> Step {
        switch consume entry {
        case .barrier(let barrier) where isIdle: return Step(batch: nil, passed: [barrier])
        case .barrier(let barrier): entries.append(.barrier(barrier))
        case .publication(let member): return add(publication: member, now: now, makeID: makeID)
        }
        return busy ? Step(batch: nil) : next(now: now, makeID: makeID)
    }

    /// Queues an event, as ``add(_:now:makeID:)`` does.
    mutating func add(publication member: consuming Member, now: UInt64, makeID: () -> String) -> Step {
        queuedEvents += 1
        entries.append(.publication(member))
        return busy ? Step(batch: nil) : next(now: now, makeID: makeID)
    }

    /// Takes out of the queue the first queued (not yet sent) event that `matches`: its publisher
    /// gave up waiting. False when none is queued (it is in flight, or done).
    mutating func withdraw(where matches: (Member) -> Bool) -> Bool {
        for index in head..<entries.count {
            guard case .publication(let member) = entries[index], matches(member) else { continue }
            entries[index] = nil
            queuedEvents -= 1
            return true
        }
        return false
    }

    /// The batch in flight is over (answered, refused or given up): the barriers now at the head
    /// pass, and the next batch, if any, goes.
    mutating func batchDone(now: UInt64, makeID: () -> String) -> Step {
        busy = false
        return next(now: now, makeID: makeID)
    }

    private mutating func next(now: UInt64, makeID: () -> String) -> Step {
        var step = Step(batch: nil)
        var members: [Member] = []
        var bytes = 0
        members.reserveCapacity(min(queuedEvents, maximumEvents))
        // Entries are moved out, not copied (one that does not fit is put back): a busy publisher's
        // events go from its queue into the batch without a reference count touched.
        taking: while head < entries.count {
            switch entries[head].take() {
            case .barrier(let barrier):
                guard members.isEmpty else {
                    entries[head] = .barrier(barrier)
                    break taking
                }
                step.passed.append(barrier)
            case .publication(let member):
                if member.deadline <= now {
                    step.expired.append(member)
                } else {
                    let size = member.event.payload.count
                    if members.count >= maximumEvents || (member.alone && !members.isEmpty)
                        || (!members.isEmpty && bytes + size > maximumBytes)
                    {
                        entries[head] = .publication(member)
                        break taking
                    }
                    bytes += size
                    members.append(member)
                }
                queuedEvents -= 1
            case nil: break
            }
            head += 1
            if members.first?.alone == true { break }
        }
        if head == entries.count {
            entries.removeAll(keepingCapacity: entries.capacity <= 4096)
            head = 0
        } else if head >= 4096 && head * 2 >= entries.count {
            entries.removeFirst(head)
            head = 0
        }
        guard !members.isEmpty else { return step }
        busy = true
        var request = PublishRequest(
            event: members[0].event.name, payload: members[0].event.payload,
            acknowledged: members.count == 1 && members[0].alone ? false : nil, publishID: makeID())
        if members.count > 1 { request.rest = members[1...].map(\.event) }
        step.batch = Batch(request: request, members: members)
        return step
    }

    /// Each member's own receipt, cut from the receipt of the PUBLISH that carried them (all of its
    /// members, in order, those given up included): its name,
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
