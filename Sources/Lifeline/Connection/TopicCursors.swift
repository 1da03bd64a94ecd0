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

    /// Forgets every name.
    mutating func removeAll() { cursors = [:] }
}
