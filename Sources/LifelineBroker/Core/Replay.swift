import LifelineProtocol

/// Sending journal events again (REPLAY, and REGISTER with a resume cursor).
enum Replay {
    /// Why events after `sequence` of `epoch` cannot all be replayed; nil when they can.
    static func problem(after sequence: UInt64, epoch cursorEpoch: UInt64, in core: BrokerCore) -> GapNotice?
    {
        if cursorEpoch != core.epoch {
            return GapNotice(
                after: sequence,
                reason: "the broker restarted (epoch \(cursorEpoch) is over); its events are gone",
                epoch: core.epoch, sequence: core.sequence)
        }
        if !core.journal.covers(after: sequence) {
            return GapNotice(
                after: sequence,
                reason:
                    "the journal no longer holds events \(sequence + 1)...\(core.journal.firstRetainedSequence - 1)",
                epoch: core.epoch, sequence: core.sequence)
        }
        return nil
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
