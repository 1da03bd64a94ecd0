import LifelineProtocol

/// Time in the broker: the timers a tick runs (service expiry, request deadlines, the journal's age
/// limit, heartbeats), when the next tick is due, and what a late tick says about the broker itself.
extension Broker {
    /// Runs every timer that is due: service expiry, the deadlines of every waiting request, the
    /// journal's age limit and heartbeats.
    package mutating func tick(now: MonotonicInstant, into output: inout [BrokerOutput]) {
        step(now, into: &output) { broker in
            broker.excuseOwnAbsence(now: now)
            broker.registry.expireSilent(in: &broker.core)
            broker.deliverAnnouncements()
            for wait in broker.core.correlator.removeExpired(now: now) {
                broker.expire(wait)
                broker.deliverAnnouncements()
            }
            broker.core.journal.trim(now: now.nanoseconds)
            if now >= broker.nextHeartbeat {
                let heartbeat = Self.heartbeatFrames
                let closed = broker.core.registry.cutOffPeers
                for peer in broker.core.registry.peers where closed.isEmpty || !closed.contains(peer) {
                    broker.core.output.append(.send(peer: peer, frames: heartbeat))
                }
                broker.nextHeartbeat =
                    now + .milliseconds(broker.core.configuration.heartbeat.intervalMilliseconds)
            }
        }
    }

    /// A tick later than the loop meant it to come (at the latest an interval after the last) by
    /// more than half an interval (at most 100 ms, at least 20 ms) finds the broker was absent: the
    /// heartbeats its services sent meanwhile may still wait unread in its socket, so that time does
    /// not count as their silence. Each gets a whole window from now, once between two messages
    /// from it.
    private mutating func excuseOwnAbsence(now: MonotonicInstant) {
        let interval = Duration.milliseconds(core.configuration.heartbeat.intervalMilliseconds)
        let meant = min(scheduledTick ?? .init(nanoseconds: .max), lastTick + interval)
        defer {
            lastTick = now
            scheduledTick = nil
        }
        let threshold = HeartbeatSettings.absenceThreshold(interval: interval.wholeNanoseconds)
        guard now > meant, (now - meant).wholeNanoseconds > threshold, !core.registry.isEmpty else { return }
        let excused = core.registry.excuseSilence(now: now.nanoseconds)
        guard excused > 0 else { return }
        core.log(
            "this broker did not run for \((now - meant).wholeMilliseconds) ms (stopped or starved): that time is not counted as its services' silence (\(excused) would have expired)"
        )
    }

    /// When ``tick(now:into:)`` next has work.
    package mutating func nextDeadline() -> MonotonicInstant {
        var next = nextHeartbeat
        if let expiry = core.registry.nextExpiry {
            next = min(next, MonotonicInstant(nanoseconds: expiry &+ 1))
        }
        if let wait = core.correlator.nextDeadline() { next = min(next, wait) }
        scheduledTick = next
        return next
    }

    static let heartbeatFrames = BrokerRequest.heartbeat.frames()
}
