import LifelineProtocol

/// Where a connection stands for each event name: the last event delivered of that name.
///
/// Bus messages come in runs of one name, so the slot of the name looked up last is remembered and a
/// run costs no hashing: a name is taken as the remembered one only when its bytes repeat (see
/// ``EventName/isIdentical(to:)``); any other goes through the table.
struct TopicCursors {
    /// The last event delivered for one name.
    struct Cursor: Equatable {
        var sequence: UInt64 = 0
        var topicSequence: UInt64 = 0
    }

    private var cursors: [Cursor] = []
    private var slots: [EventName: Int] = [:]
    private var lastName: EventName?
    private var lastSlot = 0

    /// The cursor of `name`, or nil when nothing of that name was delivered or adopted.
    subscript(name: EventName) -> Cursor? {
        get {
            if let lastName, name.isIdentical(to: lastName) { return cursors[lastSlot] }
            return slots[name].map { cursors[$0] }
        }
        set {
            // Names are forgotten all at once (removeAll), never one by one.
            guard let newValue else { preconditionFailure("a topic cursor cannot be removed") }
            cursors[slot(of: name)] = newValue
        }
    }

    /// Moves the cursor of `name` to the event at `sequence` and `topicSequence` when that event is the
    /// next of its name (its topic sequence follows the cursor's, its sequence is past it); false, and
    /// nothing changed, otherwise.
    mutating func advance(_ name: EventName, sequence: UInt64, topicSequence: UInt64) -> Bool {
        let slot = slot(of: name)
        let cursor = cursors[slot]
        // Wrapping: a cursor at the largest topic sequence (a hostile header) must not trap the client.
        guard sequence > cursor.sequence, topicSequence == cursor.topicSequence &+ 1 else { return false }
        cursors[slot] = Cursor(sequence: sequence, topicSequence: topicSequence)
        return true
    }

    /// Forgets every name.
    mutating func removeAll() {
        cursors.removeAll()
        slots.removeAll()
        lastName = nil
        lastSlot = 0
    }

    /// The slot of `name`, made when it has none; remembered as the last one.
    private mutating func slot(of name: EventName) -> Int {
        if let lastName, name.isIdentical(to: lastName) { return lastSlot }
        let slot: Int
        if let found = slots[name] {
            slot = found
        } else {
            slot = cursors.count
            cursors.append(Cursor())
            slots[name] = slot
        }
        lastName = name
        lastSlot = slot
        return slot
    }
}
