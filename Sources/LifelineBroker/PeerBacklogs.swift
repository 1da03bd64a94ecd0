/// Messages for control peers whose ZeroMQ queue is full (a peer that reads slower than the broker
/// sends to it: a long REPLAY, a paused process), kept in order until the queue has room again
/// instead of being dropped. While a peer has a backlog every message to it joins the backlog, so
/// its messages stay in order. A backlog is bounded in bytes, per peer and for all peers together: a
/// message past that overflows it — the server then closes that peer's connection rather than leave
/// a hole in what it receives (a service registers again and resumes from its cursor).
struct PeerBacklogs {
    /// What happened to a message offered to ``hold(_:for:connection:)``.
    enum Verdict: Equatable {
        /// Kept; `first` when it began the peer's backlog.
        case held(first: Bool)
        /// Not kept: too much waits already. The peer's backlog is forgotten; its connection must go.
        case overflow(held: Int)
    }

    /// What one flush did for a peer.
    struct Flushed: Equatable {
        let peer: [UInt8]
        /// How many of its held messages went out.
        let sent: Int
        /// True when nothing is held for it any more.
        let drained: Bool
    }

    private struct Backlog {
        var peer: [UInt8]
        var messages: [[[UInt8]]] = []
        var head = 0
        var bytes = 0
    }

    /// The most bytes held for one peer.
    let limitPerPeer: Int
    /// The most bytes held for all peers together.
    let limit: Int
    private var backlogs: [UInt32: Backlog] = [:]
    /// Bytes held for all peers.
    private(set) var bytes = 0
    /// How long the server may sleep before it looks at the backlogs again when nothing else wakes
    /// it: 5 ms after a look that sent something, twice as long after each that sent nothing (a
    /// stopped peer), at most 160 ms.
    private(set) var retryMilliseconds = 5

    init(limitPerPeer: Int, limit: Int) {
        self.limitPerPeer = limitPerPeer
        self.limit = limit
    }

    var isEmpty: Bool { backlogs.isEmpty }

    /// Whether messages to the peer on `connection` wait already (a new one must wait behind them).
    func holds(_ connection: UInt32) -> Bool { backlogs[connection] != nil }

    /// Keeps `frames` for `peer` (on `connection`, which the monitor reports: not 0) behind what
    /// waits for it, if there is room.
    mutating func hold(_ frames: [[UInt8]], for peer: [UInt8], connection: UInt32) -> Verdict {
        let size = frames.reduce(0) { $0 + $1.count }
        let first = backlogs[connection] == nil
        if first { retryMilliseconds = 5 }
        guard (backlogs[connection]?.bytes ?? 0) + size <= limitPerPeer, bytes + size <= limit else {
            return .overflow(held: forget(connection)?.count ?? 0)
        }
        // In place: a copy of the backlog taken out of the dictionary would copy its messages.
        modify(connection, peer: peer) { backlog in
            backlog.messages.append(frames)
            backlog.bytes += size
        }
        return .held(first: first)
    }

    private mutating func modify<Result>(
        _ connection: UInt32, peer: [UInt8], _ body: (inout Backlog) -> Result
    ) -> Result {
        let before = backlogs[connection]?.bytes ?? 0
        let result = body(&backlogs[connection, default: Backlog(peer: peer)])
        bytes += (backlogs[connection]?.bytes ?? 0) - before
        return result
    }

    /// Sends what waits, oldest first for each peer, through `send` until it says a peer's queue is
    /// full again (false). A peer whose connection is no longer open (`isOpen`) is passed over: the
    /// server forgets it when it learns that the connection closed (``forget(_:)``).
    mutating func flush(
        isOpen: (UInt32) -> Bool, send: (_ peer: [UInt8], _ frames: [[UInt8]]) -> Bool
    ) -> [Flushed] {
        var flushed: [Flushed] = []
        for connection in backlogs.keys.sorted() {
            guard isOpen(connection), let peer = backlogs[connection]?.peer else { continue }
            let (sent, drained) = modify(connection, peer: peer) { backlog in
                var sent = 0
                while backlog.head < backlog.messages.count,
                    send(backlog.peer, backlog.messages[backlog.head])
                {
                    backlog.bytes -= backlog.messages[backlog.head].reduce(0) { $0 + $1.count }
                    backlog.messages[backlog.head] = []
                    backlog.head += 1
                    sent += 1
                }
                if backlog.head > 1024 && backlog.head * 2 > backlog.messages.count {
                    backlog.messages.removeFirst(backlog.head)
                    backlog.head = 0
                }
                return (sent, backlog.head == backlog.messages.count)
            }
            if drained { backlogs[connection] = nil }
            if sent > 0 || drained { flushed.append(Flushed(peer: peer, sent: sent, drained: drained)) }
        }
        retryMilliseconds = flushed.isEmpty ? min(retryMilliseconds * 2, 160) : 5
        return flushed
    }

    /// Forgets what waits for the peer on `connection` (its connection closed); returns the peer and
    /// how many messages were held for it.
    @discardableResult
    mutating func forget(_ connection: UInt32) -> (peer: [UInt8], count: Int)? {
        guard let backlog = backlogs.removeValue(forKey: connection) else { return nil }
        bytes -= backlog.bytes
        return (backlog.peer, backlog.messages.count - backlog.head)
    }

    /// Forgets everything held (the broker stops: what could not be sent is not sent).
    mutating func forgetAll() {
        backlogs.removeAll()
        bytes = 0
    }
}
