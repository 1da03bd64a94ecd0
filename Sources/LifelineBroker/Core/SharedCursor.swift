import LifelineProtocol

/// Where one service name stands in its `shared` events, as the durable journal keeps it: a name
/// that restarts with its broker (or moves to a new group leader) is owed exactly the journal's
/// events of its shared names after ``after`` that are not ``handled``.
struct SharedCursor: Sendable, Equatable {
    var name: String
    /// Every shared event of the name up to this sequence is done: acknowledged, or dropped.
    var after: UInt64
    /// Each event name the service declares shared, with the sequence after which it is.
    var since: [EventName: UInt64]
    /// The events after ``after`` that are done.
    var handled: Set<UInt64>

    /// True when the journal's `message` is owed to the name.
    func owes(_ message: BusMessage) -> Bool {
        let sequence = message.header.sequence
        guard sequence > after, let start = since[message.name], sequence > start else { return false }
        return !handled.contains(sequence)
    }
}
