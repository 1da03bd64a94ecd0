import LifelineProtocol

/// Joining and leaving: HELLO, REGISTER or ATTACH and their replies, losing the broker and backing
/// off, finishing.
extension BrokerConnection {

    mutating func nextID(_ prefix: String) -> [UInt8] {
        counter += 1
        return Array("\(prefix)\(counter)".utf8)
    }

    mutating func connect(now: UInt64, into effects: inout [ConnectionEffect]) {
        effects.append(.openControl)
        linkUp = false
        guard configuration.joins else {
            phase = .ready
            sendUnsent(into: &effects)
            return
        }
        let id = nextID("s")
        internalRequests = [id: .hello]
        effects.append(.sendControl(ClientRequest.hello.controlRequest(id: id).frames()))
        // A group's member that is down is given a second, not the whole wait: the next may lead.
        let wait =
            configuration.brokerEndpoints.count > 1
            ? min(configuration.greetingTimeoutMilliseconds, 1000) : configuration.greetingTimeoutMilliseconds
        phase = .greeting(deadline: now &+ UInt64(wait) * 1_000_000)
    }

    mutating func handleReply(
        _ reply: ControlReply, now: UInt64, into effects: inout [ConnectionEffect]
    ) {
        if let request = outstanding[reply.requestID] {
            let refusal = reply.status == .unavailable ? reply.standbyRefusal : nil
            if let refusal, sendAgain(reply.requestID, refusedWith: refusal, now: now, into: &effects) {
                return
            }
            outstanding[reply.requestID] = nil
            if configuration.registration != nil, case .ready = phase, refusal == nil {
                // The broker this instance is registered with had heard from it when it sent this.
                configuration.contact?.answered(
                    sentAt: request.deadline &- UInt64(request.timeoutMilliseconds) * 1_000_000)
            }
            effects.append(.deliver(.completion(ticket: request.ticket, .success(reply))))
            if case .leaderAt(let leader) = refusal, case .ready = phase {
                follow(leader, now: now, into: &effects)
            }
            return
        }
        guard let kind = internalRequests.removeValue(forKey: reply.requestID) else { return }
        switch kind {
        case .hello: greeted(reply, now: now, into: &effects)
        case .join: joined(reply, now: now, into: &effects)
        case .replay: recovered(reply, into: &effects)
        case .probe:
            probeDeadline = nil
            if let hint = reply.leaderHint, case .ready = phase { follow(hint, now: now, into: &effects) }
        case .unregister:
            if !reply.status.isSuccess {
                effects.append(.deliver(.log("UNREGISTER refused: \(reply.errorMessage)")))
            }
            finish(into: &effects)
        }
    }

    mutating func greeted(_ reply: ControlReply, now: UInt64, into effects: inout [ConnectionEffect]) {
        guard case .greeting = phase else { return }
        standbyWithoutLeader = nil
        if let hint = reply.leaderHint {
            follow(hint, now: now, into: &effects)
            return
        }
        guard reply.status.isSuccess, let info = try? BrokerInfo(bytes: reply.body)
        else {
            if reply.status == .unavailable, reply.standbyRefusal == .noLeader {
                standbyWithoutLeader = reply.errorMessage
            }
            // A standby of a group with no leader yet: the next member, soon (one is being elected).
            let soon = configuration.brokerEndpoints.count > 1 && reply.status == .unavailable
            lose(
                "HELLO failed: \(reply.errorMessage)", retryAt: soon ? now &+ 100_000_000 : nil, now: now,
                into: &effects)
            return
        }
        brokerHeartbeat = info.heartbeat
        let endpoint = Self.reachable(info.bus, via: currentEndpoint)
        if endpoint != busEndpoint {
            busEndpoint = endpoint
            effects.append(.openBus(endpoint: endpoint, subscriptions: configuration.busSubscriptions))
        }
        let id = nextID("s")
        internalRequests[id] = .join
        let request: ClientRequest
        if let registration = configuration.registration {
            request = .register(
                RegisterRequest(
                    registration, resume: cursor ?? configuration.resume, holding: configuration.heldKeys()))
        } else {
            request = .attach(token: configuration.token)
        }
        held.removeAll()
        effects.append(.sendControl(request.controlRequest(id: id).frames()))
        joinSentAt = now
        phase = .joining(
            deadline: now &+ UInt64(configuration.greetingTimeoutMilliseconds + 5000) * 1_000_000)
    }

    mutating func joined(_ reply: ControlReply, now: UInt64, into effects: inout [ConnectionEffect]) {
        guard case .joining = phase else { return }
        guard reply.status.isSuccess else {
            let retryAfter = (try? ErrorReply(bytes: reply.body))?.retryAfterMilliseconds
            // A name taken by another process (409), or owned by another key (403), may be free once
            // its holder's heartbeats have expired: the reply says when.
            if reply.status == .conflict || (reply.status == .forbidden && retryAfter != nil) {
                let wait = retryAfter
                if let wait, !retriedConflict {
                    retriedConflict = true
                    effects.append(
                        .deliver(
                            .log(
                                "\(reply.errorMessage); trying once more in \(wait + 200) ms in case that process has died"
                            )))
                    internalRequests.removeAll()
                    phase = .backingOff(until: now &+ UInt64(wait + 200) * 1_000_000)
                    return
                }
                phase = .stopped
                effects.append(.deliver(.refused(LifelineError(reply: reply))))
                return
            }
            if reply.status == .forbidden || reply.status == .badRequest || reply.status == .unprocessable {
                // The policy does not allow it, or the registration is wrong (a bad name, an event
                // without a namespace): asking again changes nothing.
                phase = .stopped
                effects.append(.deliver(.refused(LifelineError(reply: reply))))
                return
            }
            lose(
                "the broker refused to register us: \(reply.errorMessage)", retryAt: nil, now: now,
                into: &effects)
            return
        }
        guard let snapshot = try? JoinSnapshot(bytes: reply.body) else {
            lose("the broker's REGISTER reply was not a snapshot", retryAt: nil, now: now, into: &effects)
            return
        }
        let joinedEpoch = snapshot.epoch
        if joinedEpoch != epoch {
            if epoch != nil {
                // A new broker life: the positions of the old one mean nothing here.
                topics.removeAll()
                lastSequence = 0
                pause.forgetPositions()
            }
            epoch = joinedEpoch
        } else if snapshot.sequence < lastSequence {
            // The same epoch, but the broker is behind us (it lost the end of its journal): its
            // numbers will be reused, so our positions would hide its new events.
            topics.removeAll()
            lastSequence = 0
            pause.forgetPositions()
        }
        adopt(snapshot.topics)
        lastSequence = max(lastSequence, snapshot.sequence)
        // What the handlers refused is not passed: a reconnect resumes from before it.
        if pause.isOn, let refusedAfter = pause.after { lastSequence = min(lastSequence, refusedAfter) }
        if let refused = snapshot.refused, !refused.isEmpty {
            effects.append(
                .deliver(
                    .log(
                        "the broker refused bus subscriptions, nothing arrives for them: \(refused.joined(separator: "; "))"
                    )
                ))
        }
        if let notice = snapshot.gap {
            effects.append(.deliver(.log("could not resume after #\(notice.after): \(notice.reason)")))
            effects.append(.deliver(.gap(notice)))
        }
        brokerHeartbeat = snapshot.heartbeat
        configuration.contact?.registered(brokerHeartbeat: snapshot.heartbeat)
        configuration.contact?.answered(sentAt: joinSentAt)
        phase = .ready
        backoffMilliseconds = configuration.initialBackoffMilliseconds
        if let registration = configuration.registration {
            heard(at: now)
            nextHeartbeat = now &+ registration.heartbeat.intervalNanoseconds
        }
        effects.append(
            .deliver(
                .joined(
                    epoch: epoch ?? 0, first: !hasJoined, sequence: snapshot.sequence,
                    lifecycle: snapshot.lifecycle.rawValue)))
        hasJoined = true
        recovering = false
        replaysOutstanding = 0
        replayWaitingSince = nil
        sendUnsent(into: &effects)
        releaseHeld(into: &effects)
        // The handlers had room again while the connection was away: ask for what they refused now.
        if pause.roomWhenReady { handlersHaveRoom(into: &effects) }
    }

    mutating func recovered(_ reply: ControlReply, into effects: inout [ConnectionEffect]) {
        let result = (try? ReplayResult(bytes: reply.body)) ?? .blank
        if let notice = result.gap {
            effects.append(
                .deliver(.log("could not recover the gap after #\(notice.after): \(notice.reason)")))
            effects.append(.deliver(.gap(notice)))
            for (name, position) in result.topics.positions {
                topics[name] = TopicCursor(sequence: position.sequence, topicSequence: position.topicSequence)
            }
            held.removeAll { $0.header.sequence <= (topics[$0.name]?.sequence ?? 0) }
        }
        replaysOutstanding = max(0, replaysOutstanding - 1)
        replayWaitingSince = nil
        // Another REPLAY is out (the handlers asked again, or a gap was found meanwhile): its answer
        // releases what is held.
        guard replaysOutstanding == 0 else { return }
        recovering = false
        releaseHeld(into: &effects)
    }

    /// Sends the requests kept for the connection's return (each may be taken from now on).
    mutating func sendUnsent(into effects: inout [ConnectionEffect]) {
        for (id, frames) in unsent where outstanding[id] != nil {
            outstanding[id]?.notTaken = false
            effects.append(.sendControl(frames))
        }
        unsent.removeAll()
    }

    /// A standby refused the request `id` (it takes none): it goes again to the leader the standby
    /// named (at once, but after 100 ms from the third refusal on: standbys whose word is stale
    /// must not bounce it), or, with no leader known, to the next member after 100 ms (one is
    /// being elected). False, leaving it to be answered with the refusal, when its deadline would
    /// pass first.
    mutating func sendAgain(
        _ id: [UInt8], refusedWith refusal: StandbyRefusal, now: UInt64,
        into effects: inout [ConnectionEffect]
    ) -> Bool {
        // Leaving: the UNREGISTER's fate is not worth a new registration.
        if case .leaving = phase { return false }
        guard var request = outstanding[id] else { return false }
        request.refusals += 1
        var leader: String?
        if case .leaderAt(let endpoint) = refusal, endpoint != currentEndpoint { leader = endpoint }
        let retryAt = leader != nil && request.refusals <= 2 ? now : now &+ 100_000_000
        guard retryAt < request.deadline else { return false }
        request.notTaken = true
        outstanding[id] = request
        if let leader {
            effects.append(.deliver(.log("\(currentEndpoint) is a standby; the leader is at \(leader)")))
            lose("following the group's leader", retryAt: retryAt, now: now, hint: leader, into: &effects)
        } else {
            lose(
                "\(currentEndpoint) is a standby of a group with no leader at the moment", retryAt: retryAt,
                now: now, into: &effects)
        }
        return true
    }

    /// A standby said where the leader is: connect there at once.
    mutating func follow(_ leader: String, now: UInt64, into effects: inout [ConnectionEffect]) {
        guard leader != currentEndpoint else { return }
        effects.append(.deliver(.log("\(currentEndpoint) is a standby; the leader is at \(leader)")))
        lose("following the group's leader", retryAt: now, now: now, hint: leader, into: &effects)
    }

    /// Gives up on the current connection and plans the next attempt (at once for `retryAt: now`).
    mutating func lose(
        _ reason: String, retryAt: UInt64?, now: UInt64, hint: String? = nil,
        into effects: inout [ConnectionEffect]
    ) {
        // A group's endpoints are tried in turn; a standby's word on the leader goes first.
        if let hint {
            _ = members.follow(hint)
        } else if members.isGroup {
            members.advance()
        }
        for (id, request) in outstanding where !request.repeatable && !request.notTaken {
            let error = LifelineError(
                .unavailable, "the connection to the broker was lost before it answered \(request.command)")
            effects.append(.deliver(.completion(ticket: request.ticket, .failure(error))))
            outstanding[id] = nil
        }
        // Repeatable requests, and those not taken, go again in their order once the connection
        // is back (for a service: registered again).
        unsent = outstanding.sorted { $0.value.order < $1.value.order }.map { ($0.key, $0.value.frames) }
        if !unsent.isEmpty {
            effects.append(.deliver(.log("\(unsent.count) request(s) will be sent again once connected")))
        }
        internalRequests.removeAll()
        probeDeadline = nil
        recovering = false
        replaysOutstanding = 0
        replayWaitingSince = nil
        brokerDeadline = .max
        nextHeartbeat = .max
        if let retryAt, retryAt > now {
            effects.append(.deliver(.log("\(reason); reconnecting in \((retryAt - now) / 1_000_000) ms")))
            phase = .backingOff(until: retryAt)
            // A plain client's requests wait in `unsent`: nothing its socket queued may reach a
            // member meanwhile (libzmq reconnects on its own), nor its monitor move it again.
            if !configuration.joins { effects.append(.closeControl) }
            return
        }
        if let retryAt {
            effects.append(.deliver(.log("\(reason); reconnecting now")))
            phase = .backingOff(until: retryAt)
            connect(now: now, into: &effects)
            return
        }
        let wait = Int(Double(backoffMilliseconds) * min(1.2, max(0.8, configuration.jitter())))
        effects.append(.deliver(.log("\(reason); reconnecting in \(wait) ms")))
        phase = .backingOff(until: now &+ UInt64(wait) * 1_000_000)
        backoffMilliseconds = min(backoffMilliseconds * 2, configuration.maximumBackoffMilliseconds)
    }

    mutating func finish(into effects: inout [ConnectionEffect]) {
        for (_, request) in outstanding {
            effects.append(
                .deliver(
                    .completion(
                        ticket: request.ticket,
                        .failure(LifelineError(.unavailable, "the connection was closed")))))
        }
        outstanding.removeAll()
        phase = .stopped
        effects.append(.deliver(.finished))
    }
}
