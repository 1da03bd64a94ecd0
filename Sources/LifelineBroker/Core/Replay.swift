import LifelineProtocol

/// Sending journal events again (REPLAY, and REGISTER with a resume cursor).
enum Replay {
    /// What a subscriber whose cursor is `sequence` of `epoch` can get again: the sequence of this
    /// epoch to replay after (nil: nothing can be), and the gap notice for what is gone, if anything.
    /// A cursor of an earlier epoch (the broker restarted without its journal) gets every event of
    /// this epoch the journal still holds, and a notice that the rest of its own epoch is gone.
    static func plan(after sequence: UInt64, epoch cursorEpoch: UInt64, in core: BrokerCore)
        -> (replayAfter: UInt64?, gap: GapNotice?)
    {
        let journal = core.journal
        if cursorEpoch == core.epoch {
            if sequence > core.sequence {
                let reason =
                    "the broker's journal ends at #\(core.sequence), before this cursor (#\(sequence)): it lost events it had sent, and numbers them again from there"
                return (
                    nil,
                    GapNotice(after: sequence, reason: reason, epoch: core.epoch, sequence: core.sequence)
                )
            }
            if journal.covers(after: sequence) { return (sequence, nil) }
            let reason =
                "the journal no longer holds events \(sequence + 1)...\(journal.firstRetainedSequence - 1)"
            return (
                nil, GapNotice(after: sequence, reason: reason, epoch: core.epoch, sequence: core.sequence)
            )
        }
        var reason =
            "the broker restarted without a journal (epoch \(cursorEpoch) is over): events of it after #\(sequence), if any, are gone"
        if !journal.covers(after: 0) {
            reason +=
                "; and the journal no longer holds events 1...\(journal.firstRetainedSequence - 1) of epoch \(core.epoch)"
        }
        let gap = GapNotice(after: sequence, reason: reason, epoch: core.epoch, sequence: core.sequence)
        return (journal.covers(after: 0) ? 0 : journal.firstRetainedSequence - 1, gap)
    }

    /// Sends the journal's events after `sequence` named in `names` to `peer` as EVENT messages;
    /// returns how many.
    static func send(
        after sequence: UInt64, names: Set<EventName>, to peer: [UInt8], in core: inout BrokerCore
    )
        -> Int
    {
        let events = core.journal.events(after: sequence, names: names)
        for event in events { core.send(peer, .event(event)) }
        return events.count
    }
}
