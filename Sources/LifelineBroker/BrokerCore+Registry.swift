import LifelineProtocol

/// The registry commands: HELLO, REGISTER (with resume and replay), UNREGISTER, LOOKUP, LIST, ATTACH.
extension BrokerCore {
    var helloBody: JSONValue {
        [
            "protocol": .string(ProtocolID.control), "bus": .string(busEndpoints.first ?? ""),
            "buses": .array(busEndpoints.map { .string($0) }), "epoch": .int(Int64(epoch)),
            "sequence": .int(Int64(sequence)), "heartbeat": configuration.heartbeat.json,
            "maxMessageBytes": .int(Int64(configuration.maximumMessageBytes)),
            "lifecycle": .string(lifecycle.rawValue),
            "journal": [
                "events": .int(Int64(journal.count)),
                "firstSequence": .int(Int64(journal.firstRetainedSequence)),
                "capacity": .int(Int64(configuration.journalCapacity)),
                "maxAgeMs": .int(Int64(configuration.journalMaximumAgeMilliseconds)),
            ],
            "broker": [
                "pid": .int(Int64(identity.pid)), "host": .string(identity.host),
                "version": .string(identity.version),
            ],
        ]
    }

    func replyAttached(_ peer: [UInt8], _ requestID: [UInt8], into output: inout [BrokerOutput]) {
        let body: JSONValue = [
            "bus": .string(busEndpoints.first ?? ""), "epoch": .int(Int64(epoch)),
            "sequence": .int(Int64(sequence)),
            "lifecycle": .string(lifecycle.rawValue),
        ]
        send(peer, ControlReply(requestID: requestID, json: body), into: &output)
    }

    mutating func attach(
        _ request: ControlRequest, from peer: [UInt8], now: UInt64, into output: inout [BrokerOutput]
    ) {
        guard let token = request.header["token"]?.stringValue, !token.isEmpty else {
            refuse(
                peer,
                ProtocolError(.badRequest, "ATTACH needs a string 'token'", requestID: request.requestID),
                into: &output)
            return
        }
        if attachments.hasSeen(token) {
            replyAttached(peer, request.requestID, into: &output)
        } else {
            attachments.wait(
                for: token, .attach(peer: peer, requestID: request.requestID),
                deadline: deadline(now, configuration.attachTimeoutMilliseconds))
        }
    }

    mutating func expireAttachments(now: UInt64, into output: inout [BrokerOutput]) {
        for (token, waiter) in attachments.removeExpired(now: now) {
            let (peer, requestID, what): ([UInt8], [UInt8], String)
            switch waiter {
            case .attach(let p, let r): (peer, requestID, what) = (p, r, "ATTACH")
            case .register(let p, let r, let registration, _):
                (peer, requestID, what) = (p, r, "REGISTER of '\(registration.name)'")
            }
            let message =
                "\(what) timed out: the bus subscription '!\(token)' did not arrive within "
                + "\(configuration.attachTimeoutMilliseconds) ms; subscribe to it on \(busEndpoints.first ?? "the bus") first"
            output.append(.log(message))
            send(peer, ControlReply.error(.timeout, message, requestID: requestID), into: &output)
        }
    }

    mutating func register(
        _ request: ControlRequest, from peer: [UInt8], now: UInt64, into output: inout [BrokerOutput]
    ) {
        let registration: ServiceRegistration
        var resume: (epoch: UInt64, sequence: UInt64)?
        do throws(ProtocolError) {
            registration = try ServiceRegistration(json: request.header)
            if let cursor = request.header["resume"], cursor != .null {
                guard let cursorEpoch = cursor["epoch"]?.intValue,
                    let cursorSequence = cursor["sequence"]?.intValue, cursorSequence >= 0
                else {
                    throw ProtocolError(
                        .badRequest, "REGISTER 'resume' needs integer fields epoch and sequence")
                }
                resume = (UInt64(cursorEpoch), UInt64(cursorSequence))
            }
        } catch {
            refuse(
                peer, ProtocolError(error.status, error.message, requestID: request.requestID), into: &output)
            return
        }
        if let existing = registry.entry(named: registration.name),
            existing.registration.instance != registration.instance
        {
            if case .refused(let reason, let retryAfter) = registry.admit(registration, peer: peer, now: now)
            {
                output.append(
                    .log(
                        "refused registration of \(registration.name) by pid \(registration.pid): name taken")
                )
                send(
                    peer, Self.conflict(reason, retryAfter: retryAfter, requestID: request.requestID),
                    into: &output)
            }
            return
        }
        if attachments.hasSeen(registration.attachToken) {
            completeRegistration(
                registration, resume: resume, peer: peer, requestID: request.requestID, now: now,
                into: &output)
        } else {
            attachments.wait(
                for: registration.attachToken,
                .register(peer: peer, requestID: request.requestID, registration, resume: resume),
                deadline: deadline(now, configuration.attachTimeoutMilliseconds))
        }
    }

    /// Admits the service, replays what it missed (when it asked to resume), and answers with the state
    /// it starts from: lifecycle, sequence, and the last sequence of each of its events.
    mutating func completeRegistration(
        _ registration: ServiceRegistration, resume: (epoch: UInt64, sequence: UInt64)?, peer: [UInt8],
        requestID: [UInt8],
        now: UInt64, into output: inout [BrokerOutput]
    ) {
        let admission = registry.admit(registration, peer: peer, now: now)
        if case .refused(let reason, let retryAfter) = admission {
            send(peer, Self.conflict(reason, retryAfter: retryAfter, requestID: requestID), into: &output)
            return
        }
        // The snapshot (and any replay) is taken before this registration's own serviceDidStart, which
        // then reaches the service live with the next sequence.
        var body: [String: JSONValue] = [
            "epoch": .int(Int64(epoch)), "sequence": .int(Int64(sequence)),
            "bus": .string(busEndpoints.first ?? ""),
            "heartbeat": configuration.heartbeat.json, "lifecycle": .string(lifecycle.rawValue),
            "topics": topicState(for: registration.events),
        ]
        if let resume {
            switch replayProblem(after: resume.sequence, epoch: resume.epoch) {
            case .some(let gap): body["gap"] = gap
            case .none:
                let events = sendReplay(
                    after: resume.sequence, names: Set(registration.events), to: peer, into: &output)
                body["replayed"] = .int(Int64(events))
                if events > 0 {
                    output.append(
                        .log("replayed \(events) events to \(registration.name) after #\(resume.sequence)"))
                }
            }
        }
        defer {
            if !registration.lazy && startsImmediately {
                startService(registration.name, now: now, into: &output)
            }
            hostRegistered(registration, now: now, into: &output)
            checkBootReadiness(now: now, into: &output)
        }
        if admission == .added {
            output.append(
                .log(
                    "registered \(registration.name) (pid \(registration.pid) on \(registration.host); events: \(registration.events.count), methods: \(registration.methods.count))"
                ))
            publishRuntime(
                .serviceDidStart,
                [
                    "name": .string(registration.name), "pid": .int(Int64(registration.pid)),
                    "host": .string(registration.host),
                ],
                now: now, into: &output)
        } else {
            output.append(
                .log("\(registration.name) (pid \(registration.pid)) registered again after a reconnect"))
        }
        send(peer, ControlReply(requestID: requestID, json: .object(body)), into: &output)
    }

    /// A 409 for a taken name, with how long until the holder would expire if it has died.
    static func conflict(_ reason: String, retryAfter: Int64, requestID: [UInt8]) -> ControlReply {
        ControlReply(
            requestID: requestID, status: .conflict,
            json: ["error": .string(reason), "retryAfterMs": .int(retryAfter)])
    }

    /// The last sequence and topic sequence of each of `names` ({} for names never published).
    func topicState(for names: [EventName]) -> JSONValue {
        var topics: [String: JSONValue] = [:]
        for name in names {
            guard let state = journal.topics[name] else { continue }
            topics[name.rawValue] = [
                "sequence": .int(Int64(state.sequence)), "topicSequence": .int(Int64(state.topicSequence)),
            ]
        }
        return .object(topics)
    }

    /// The registered service a request names in its header's `name`; otherwise refuses the request
    /// (400 without a name, 404 for an unknown one) and returns nil.
    func namedEntry(_ request: ControlRequest, from peer: [UInt8], into output: inout [BrokerOutput])
        -> (String, ServiceRegistry.Entry)?
    {
        guard let name = request.header["name"]?.stringValue else {
            refuse(
                peer,
                ProtocolError(
                    .badRequest, "\(request.command.rawValue) needs a string 'name'",
                    requestID: request.requestID),
                into: &output)
            return nil
        }
        guard let entry = registry.entry(named: name) else {
            send(
                peer,
                ControlReply.error(.notFound, "no service named '\(name)'", requestID: request.requestID),
                into: &output)
            return nil
        }
        return (name, entry)
    }

    mutating func unregister(
        _ request: ControlRequest, from peer: [UInt8], now: UInt64, into output: inout [BrokerOutput]
    ) {
        guard let (name, entry) = namedEntry(request, from: peer, into: &output) else { return }
        let sameInstance = request.header["instance"]?.stringValue == entry.registration.instance
        guard entry.peer == peer || sameInstance else {
            let message =
                "service '\(name)' belongs to pid \(entry.registration.pid) on '\(entry.registration.host)'; only its owner may unregister it"
            send(peer, ControlReply.error(.forbidden, message, requestID: request.requestID), into: &output)
            return
        }
        registry.remove(name)
        output.append(.log("unregistered \(name) (pid \(entry.registration.pid))"))
        serviceStopped(entry.registration, reason: "unregistered", now: now, into: &output)
        send(peer, ControlReply(requestID: request.requestID, json: ["name": .string(name)]), into: &output)
    }

    mutating func lookup(
        _ request: ControlRequest, from peer: [UInt8], now: UInt64, into output: inout [BrokerOutput]
    ) {
        guard let (name, entry) = namedEntry(request, from: peer, into: &output) else { return }
        if deferUntilStarted(name, request, from: peer, now: now, into: &output) { return }
        send(
            peer, ControlReply(requestID: request.requestID, json: record(of: entry, now: now).json),
            into: &output)
    }

    func list(_ request: ControlRequest, from peer: [UInt8], now: UInt64, into output: inout [BrokerOutput]) {
        let records = registry.entries.values.sorted { $0.registration.name < $1.registration.name }.map {
            record(of: $0, now: now).json
        }
        send(
            peer, ControlReply(requestID: request.requestID, json: ["services": .array(records)]),
            into: &output)
    }

    func record(of entry: ServiceRegistry.Entry, now: UInt64) -> ServiceRecord {
        ServiceRecord(
            registration: entry.registration,
            registeredAtMilliseconds: Int64(wall(at: entry.registeredAt) / 1_000_000),
            lastSeenMillisecondsAgo: Int64((now &- entry.lastSeen) / 1_000_000),
            uptimeMilliseconds: Int64((now &- entry.registeredAt) / 1_000_000),
            started: starts.isStarted(entry.registration.name))
    }

    /// A service left (unregistered or expired): fail its calls, release what waited on it, publish
    /// serviceDidStop.
    mutating func serviceStopped(
        _ registration: ServiceRegistration, reason: String, now: UInt64, into output: inout [BrokerOutput]
    ) {
        for call in calls.removeAll(for: registration.name) {
            let message =
                "service '\(registration.name)' went away (\(reason)) before answering \(call.method)"
            send(
                call.client, ControlReply.error(.unavailable, message, requestID: call.clientRequestID),
                into: &output)
        }
        for entry in acknowledgements.serviceGone(
            registration.name, reason: "service \(reason) before acknowledging")
        {
            replyAcknowledged(entry, into: &output)
        }
        offersGone(to: registration.name, reason: reason, now: now, into: &output)
        forgetStart(registration.name, into: &output)
        hostStopped(registration, now: now, into: &output)
        bootServiceGone(registration.name, now: now, into: &output)
        publishRuntime(
            .serviceDidStop, ["name": .string(registration.name), "reason": .string(reason)], now: now,
            into: &output)
    }
}
