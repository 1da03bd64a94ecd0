import LifelineProtocol

/// Where a connection stands for each event name: the last event delivered of that name. Bus
/// messages come in runs of one name, and a run finds its name's cursor without hashing
/// (``NameTable``).
struct TopicCursors {
    /// The last event delivered for one name.
    struct Cursor: Equatable {
        var sequence: UInt64 = 0
        var topicSequence: UInt64 = 0
    }

    private var cursors = NameTable<Cursor>()

    /// The cursor of `name`, or nil when nothing of that name was delivered or adopted.
    subscript(name: EventName) -> Cursor? {
        get { cursors[name] }
        set {
            // Names are forgotten all at once (removeAll), never one by one.
            guard let newValue else { preconditionFailure("a topic cursor cannot be removed") }
            cursors.update(name, initial: newValue) { $0 = newValue }
        }
    }

    /// Moves the cursor of `name` to the event at `sequence` and `topicSequence` when that event is the
    /// next of its name (its topic sequence follows the cursor's, its sequence is past it); false, and
    /// the cursor unchanged, otherwise (a name seen for the first time gets a cursor at the start).
    mutating func advance(_ name: EventName, sequence: UInt64, topicSequence: UInt64) -> Bool {
        var moved = false
        cursors.update(name, initial: Cursor()) { cursor in
            // Wrapping: a cursor at the largest topic sequence (a hostile header) must not trap the client.
            guard sequence > cursor.sequence, topicSequence == cursor.topicSequence &+ 1 else { return }
            cursor = Cursor(sequence: sequence, topicSequence: topicSequence)
            moved = true
        }
        return moved
    }

    /// Forgets every name.
    mutating func removeAll() { cursors = NameTable() }
}
