import LifelineProtocol

/// Time: requests that went unanswered, the phases' deadlines, heartbeats both ways, and when the
/// loop must next call ``BrokerConnection/tick(now:into:)``.
extension BrokerConnection {
    /// Runs the timers that are due.
    mutating func tick(now: UInt64, into effects: inout [ConnectionEffect]) {
        let meant = plannedTick ?? (lastTick &+ heartbeatInterval)
        let late = lastTick != 0 && now > meant ? now &- meant : 0
        let absent = late > HeartbeatSettings.absenceThreshold(interval: heartbeatInterval)
        lastTick = now
        plannedTick = nil
        failForNoBroker(now: now, into: &effects)
        var unanswered: Command?
        var sawUnansweredCall = false
        var refusedBeforeSending = false
        for (id, request) in outstanding where request.deadline <= now {
            outstanding[id] = nil
            // Refused before it could be sent (a time-out shorter than the no-broker wait): say so.
            let refused = watchesLink && !linkConnected && linkRefusedAt != nil
            refusedBeforeSending = refusedBeforeSending || refused
            let error =
                refused
                ? noBrokerError
                : standbyWithoutLeader.map(LifelineError.standbyRefusal)
                    ?? LifelineError.unanswered(
                        request.command, milliseconds: request.timeoutMilliseconds, endpoint: currentEndpoint)
            effects.append(.deliver(.completion(ticket: request.ticket, .failure(error))))
            // What the broker answers itself (not a service's CALL or DISPATCH step) left
            // unanswered: with a group, the leader may be gone — try the next member.
            if request.command != .call && request.command != .dispatch {
                unanswered = request.command
            } else {
                sawUnansweredCall = true
            }
        }
        // What the socket still queues must not reach a broker that starts later.
        if refusedBeforeSending, case .ready = phase { effects.append(.reopenControlDiscardingQueue) }
        if let unanswered, configuration.brokerEndpoints.count > 1, case .ready = phase {
            lose(
                "the broker at \(currentEndpoint) did not answer \(unanswered)", retryAt: now, now: now,
                into: &effects)
        } else if let probeDeadline, now >= probeDeadline, case .ready = phase {
            lose(
                "the broker at \(currentEndpoint) did not answer HELLO after a call went unanswered",
                retryAt: now, now: now, into: &effects)
        } else if sawUnansweredCall, configuration.brokerEndpoints.count > 1, probeDeadline == nil,
            case .ready = phase
        {
            // A CALL unanswered may be a slow service, or a leader that is gone: a HELLO tells.
            let id = nextID("s")
            internalRequests[id] = .probe
            effects.append(.sendControl(ClientRequest.hello.frames(id: id)))
            probeDeadline = now &+ UInt64(min(configuration.greetingTimeoutMilliseconds, 1000)) * 1_000_000
        }
        if replaysOutstanding > 0, case .ready = phase {
            // Live events are held until the journal answers: a REPLAY the broker never answers
            // (lost on its way) must not hold them for ever. Reconnecting resumes before them.
            if let since = replayWaitingSince, now >= since &+ Self.replayLimitNanoseconds {
                lose(
                    "the broker did not answer REPLAY within \(Self.replayLimitNanoseconds / 1_000_000_000) s",
                    retryAt: nil, now: now, into: &effects)
            } else if replayWaitingSince == nil {
                replayWaitingSince = now
            }
        }
        switch phase {
        case .greeting(let deadline) where now >= deadline:
            lose(
                "the broker at \(currentEndpoint) did not answer HELLO", retryAt: nil, now: now,
                into: &effects)
        case .joining(let deadline) where now >= deadline:
            lose("the broker did not confirm the registration", retryAt: nil, now: now, into: &effects)
        case .backingOff(let until) where now >= until:
            connect(now: now, into: &effects)
        case .leaving(let deadline) where now >= deadline:
            effects.append(.deliver(.log("the broker did not answer UNREGISTER; leaving anyway")))
            finish(into: &effects)
        case .ready where registers:
            if absent && !excusedSilence {
                // The broker's heartbeats sent meanwhile may wait unread: its silence counts from now.
                excusedSilence = true
                if now > brokerDeadline {
                    effects.append(
                        .deliver(
                            .log(
                                "this service did not run for \(late / 1_000_000) ms (stopped or starved): that time is not counted as the broker's silence"
                            )))
                }
                brokerDeadline = max(brokerDeadline, now &+ brokerHeartbeat.expiryNanoseconds)
            }
            if now > brokerDeadline {
                let silence = brokerHeartbeat.expiryNanoseconds / 1_000_000
                lose("the broker was silent for \(silence) ms", retryAt: nil, now: now, into: &effects)
            } else if now >= nextHeartbeat {
                effects.append(.sendControl(heartbeatFrames))
                nextHeartbeat = now &+ heartbeatInterval
            }
        default: break
        }
    }

    /// When ``tick(now:into:)`` next has work.
    var nextDeadline: UInt64 {
        var deadline = UInt64.max
        for request in outstanding.values where request.deadline < deadline { deadline = request.deadline }
        if let absent = noBrokerAt, !outstanding.isEmpty { deadline = min(deadline, absent) }
        if let probeDeadline { deadline = min(deadline, probeDeadline) }
        if let since = replayWaitingSince { deadline = min(deadline, since &+ Self.replayLimitNanoseconds) }
        switch phase {
        case .greeting(let until), .joining(let until), .backingOff(let until), .leaving(let until):
            deadline = min(deadline, until)
        case .ready where registers:
            deadline = min(deadline, nextHeartbeat, brokerDeadline &+ 1)
        default: break
        }
        return deadline
    }

    /// How long REPLAYs may go unanswered (none of them answered) before the connection is given
    /// up and made again: long enough for a journal's worth of events to come first.
    static let replayLimitNanoseconds: UInt64 = 30_000_000_000

    static let heartbeatFrames = ClientRequest.heartbeat(dropped: nil).frames(id: [])

    /// A heartbeat, with what the handlers dropped, have queued and have run, when there is any.
    var heartbeatFrames: [[UInt8]] {
        let dropped = configuration.droppedEvents()
        let report = configuration.handlerReport()
        // The service's own name: a broker that lost it (it restarted) says so at once, even when
        // this connection registered other names since.
        let name = configuration.registration?.name
        guard dropped != 0 || report.queued != 0 || !report.handled.isEmpty || name != nil else {
            return Self.heartbeatFrames
        }
        return ClientRequest.heartbeat(
            dropped: dropped == 0 ? nil : dropped, queued: report.queued == 0 ? nil : report.queued,
            handled: report.handled.isEmpty ? nil : report.handled, name: name,
            undecodable: report.undecodable == 0 ? nil : report.undecodable,
            failed: report.failed == 0 ? nil : report.failed
        ).frames(id: [])
    }
}
