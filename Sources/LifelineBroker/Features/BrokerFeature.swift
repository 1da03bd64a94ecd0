import LifelineProtocol

/// One concern of the broker (registry, calls, publishing, dispatch, apps, boot): it handles its own
/// requests, the answers and expiries of its own waits, and reacts to what the core announces. It
/// never calls another feature.
protocol BrokerFeature {
    /// Handles one of this feature's requests.
    mutating func handle(_ request: ClientRequest, from peer: [UInt8], id: [UInt8], in core: inout BrokerCore)
    /// A peer answered one of this feature's waits.
    mutating func answered(_ wait: Correlator.Entry, with reply: ControlReply, in core: inout BrokerCore)
    /// One of this feature's waits passed its deadline.
    mutating func expired(_ wait: Correlator.Entry, in core: inout BrokerCore)
    /// Something happened in another feature (or in this one).
    mutating func react(to announcement: Announcement, in core: inout BrokerCore)
}

extension BrokerFeature {
    mutating func answered(_ wait: Correlator.Entry, with reply: ControlReply, in core: inout BrokerCore) {}
    mutating func expired(_ wait: Correlator.Entry, in core: inout BrokerCore) {}
    mutating func react(to announcement: Announcement, in core: inout BrokerCore) {}
}

/// Per-feature tables keyed by correlator key.
struct KeyCounter {
    private var last: UInt64 = 0

    mutating func next() -> UInt64 {
        last += 1
        return last
    }
}
