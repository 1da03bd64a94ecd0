/// Messages for control peers whose ZeroMQ queue is full (a peer that reads slower than the broker
/// sends to it: a long REPLAY, a paused process), kept in order until the queue has room again
/// instead of being dropped. While a peer has a backlog every message to it joins the backlog, so
/// its messages stay in order. A backlog is bounded in bytes, per peer and for all peers together:
/// past that, messages to the peer are dropped (as libzmq would have) and the drop is said once.
struct PeerBacklogs {
    /// What happened to a message offered to ``hold(_:for:connection:)``.
    enum Verdict: Equatable {
        /// Kept; `first` when it began the peer's backlog.
        case held(first: Bool)
        /// Dropped: the backlog is full. `first` for the first drop since the backlog began.
        case dropped(first: Bool)
    }

    /// What one flush did for a peer.
    struct Flushed: Equatable {
        let peer: [UInt8]
        /// How many of its held messages went out.
        let sent: Int
        /// True when nothing is held for it any more.
        let drained: Bool
        /// How many were dropped while it was held, said when it drains.
        let dropped: Int
    }

    private struct Backlog {
        var peer: [UInt8]
        var messages: [[[UInt8]]] = []
        var head = 0
        var bytes = 0
        var dropped = 0
    }

    /// The most bytes held for one peer.
    let limitPerPeer: Int
    /// The most bytes held for all peers together.
    let limit: Int
    private var backlogs: [UInt32: Backlog] = [:]
    /// Bytes held for all peers.
    private(set) var bytes = 0

    init(limitPerPeer: Int, limit: Int) {
        self.limitPerPeer = limitPerPeer
        self.limit = limit
    }

    var isEmpty: Bool { backlogs.isEmpty }

    /// Whether messages to the peer on `connection` wait already (a new one must wait behind them).
    func holds(_ connection: UInt32) -> Bool { backlogs[connection] != nil }

    /// Keeps `frames` for `peer` (on `connection`) behind what waits for it, if there is room.
    mutating func hold(_ frames: [[UInt8]], for peer: [UInt8], connection: UInt32) -> Verdict {
        let size = frames.reduce(0) { $0 + $1.count }
        let first = backlogs[connection] == nil
        let fits = (backlogs[connection]?.bytes ?? 0) + size <= limitPerPeer && bytes + size <= limit
        // In place: a copy of the backlog taken out of the dictionary would copy its messages.
        return modify(connection, peer: peer) { backlog in
            guard fits else {
                backlog.dropped += 1
                return .dropped(first: backlog.dropped == 1)
            }
            backlog.messages.append(frames)
            backlog.bytes += size
            return .held(first: first)
        }
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
            let (sent, drained, dropped) = modify(connection, peer: peer) { backlog in
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
                return (sent, backlog.head == backlog.messages.count, backlog.dropped)
            }
            if drained { backlogs[connection] = nil }
            if sent > 0 || drained {
                flushed.append(
                    Flushed(peer: peer, sent: sent, drained: drained, dropped: drained ? dropped : 0))
            }
        }
        return flushed
    }

    /// Forgets what waits for the peer on `connection` (its connection closed); returns the peer and
    /// how many messages were held for it.
    mutating func forget(_ connection: UInt32) -> (peer: [UInt8], count: Int)? {
        guard let backlog = backlogs.removeValue(forKey: connection) else { return nil }
        bytes -= backlog.bytes
        return (backlog.peer, backlog.messages.count - backlog.head)
    }

    /// The connections something waits for.
    var connections: [UInt32] { Array(backlogs.keys) }
}
