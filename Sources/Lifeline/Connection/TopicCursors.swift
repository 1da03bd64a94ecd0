import LifelineProtocol

/// Where a connection stands for each event name: the last event delivered of that name.
struct TopicCursors {
    /// The last event delivered for one name.
    struct Cursor: Equatable {
        var sequence: UInt64 = 0
        var topicSequence: UInt64 = 0

        /// Moves to the event at `sequence` and `topicSequence` when it is the next one; false, and
        /// unchanged, otherwise.
        mutating func advance(sequence: UInt64, topicSequence: UInt64) -> Bool {
            // Wrapping: a cursor at the largest topic sequence (a hostile header) must not trap the client.
            guard sequence > self.sequence, topicSequence == self.topicSequence &+ 1 else { return false }
            self = Cursor(sequence: sequence, topicSequence: topicSequence)
            return true
        }

        /// Moves over `messages` from the first on while each is of `name` and `epoch` and the next
        /// one; returns how many.
        mutating func advance(over messages: ArraySlice<BusMessage>, of name: EventName, epoch: UInt64) -> Int
        {
            var moved = 0
            for message in messages {
                guard message.header.epoch == epoch, message.name.isIdentical(to: name),
                    advance(sequence: message.header.sequence, topicSequence: message.header.topicSequence)
                else { break }
                moved += 1
            }
            return moved
        }
    }

    private var cursors: [EventName: Cursor] = [:]

    /// The cursor of `name`, or nil when nothing of that name was delivered or adopted.
    subscript(name: EventName) -> Cursor? {
        get { cursors[name] }
        set {
            // Names are forgotten all at once (removeAll), never one by one.
            guard let newValue else { preconditionFailure("a topic cursor cannot be removed") }
            cursors[name] = newValue
        }
    }

    /// Moves the cursor of `name` to the event at `sequence` and `topicSequence` when that event is the
    /// next of its name (its topic sequence follows the cursor's, its sequence is past it); false, and
    /// nothing changed, otherwise — also for a name without a cursor (no cursor and one at the start
    /// are not alike to a replayed event). One lookup of the name.
    mutating func advance(_ name: EventName, sequence: UInt64, topicSequence: UInt64) -> Bool {
        cursors[name]?.advance(sequence: sequence, topicSequence: topicSequence) ?? false
    }

    /// Moves the cursor of `name` over `messages` from the first on, while each is of `name` and
    /// `epoch` and the next of its name (as ``advance(_:sequence:topicSequence:)`` for each in turn);
    /// returns how many it moved over. One lookup of the name for the whole run.
    mutating func advance(_ name: EventName, over messages: ArraySlice<BusMessage>, epoch: UInt64) -> Int {
        cursors[name]?.advance(over: messages, of: name, epoch: epoch) ?? 0
    }

    /// Forgets every name.
    mutating func removeAll() { cursors = [:] }
}
