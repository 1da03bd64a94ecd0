import LifelineProtocol

/// The beginning and end of a broker's life: a group leader's term, a start on a state directory an
/// earlier life left, and a stop.
extension Broker {
    /// Begins a group leader's term at `now`: for `window`, a LOOKUP or CALL of a service that has
    /// not registered yet is answered 503 (retry) rather than 404, while services register again.
    /// (Every lifecycle change is saved in `lifecycle.json`, as with any state directory, and the
    /// group replicates it.)
    package mutating func beginGroupTerm(rejoinWindow window: Duration, now: MonotonicInstant) {
        core.rejoining = (now, now + window, .takeover)
    }

    /// Begins the life of a broker started again on its state directory: for `window`, a LOOKUP or
    /// CALL of a service that has not registered yet is answered 503 (retry) rather than 404, while
    /// services register again.
    package mutating func beginRestart(rejoinWindow window: Duration, now: MonotonicInstant) {
        core.rejoining = (now, now + window, .restart)
    }

    /// Tells every registered service that the broker is leaving.
    package func shutdown(reason: String, into output: inout [BrokerOutput]) {
        disconnect(Array(core.registry.peers), reason: reason, into: &output)
    }

    /// A single broker stopping cleanly ends the application: with a state directory its next life
    /// starts `notRunning` (one that crashed, or a group's next leader, goes on in the saved state).
    package mutating func endApplication(now: MonotonicInstant, into output: inout [BrokerOutput]) {
        step(now, into: &output) { broker in broker.core.lifecycle = .notRunning }
    }

    /// Tells `peers` to go (DISCONNECT with `reason`).
    func disconnect(_ peers: [[UInt8]], reason: String, into output: inout [BrokerOutput]) {
        let frames = BrokerRequest.disconnect(reason: reason).frames()
        for peer in peers { output.append(.send(peer: peer, frames: frames)) }
    }
}
