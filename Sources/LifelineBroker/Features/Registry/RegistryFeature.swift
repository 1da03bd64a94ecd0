import LifelineProtocol

/// The registry's commands: HELLO, REGISTER (with its bus marker, resume and replay), UNREGISTER,
/// LIST, ATTACH and HEARTBEAT; heartbeat expiry; `serviceDidStart` / `serviceDidStop` on the bus.
struct RegistryFeature: BrokerFeature {
    /// A request held until its client's bus marker arrives.
    enum MarkerWait {
        case attach(peer: [UInt8], requestID: [UInt8])
        case register(peer: [UInt8], requestID: [UInt8], RegisterRequest)
    }

    private var markers = AttachTracker()
    private var waiting: [UInt64: (wait: MarkerWait, token: String, id: [UInt8])] = [:]
    private var keys = KeyCounter()

    mutating func handle(_ request: ClientRequest, from peer: [UInt8], id: [UInt8], in core: inout BrokerCore)
    {
        switch request {
        case .hello: core.reply(peer, id, Self.hello(core))
        case .heartbeat(let dropped, let queued, let handled, let name):
            if dropped != nil || queued != nil || handled != nil {
                core.registry.report(dropped: dropped, queued: queued, handled: handled, peer: peer)
            }
            let registering = waiting.values.contains {
                if case .register(let waiting, _, _) = $0.wait { return waiting == peer }
                return false
            }
            // A connection that names its service must hold it: one that registered only other
            // names (at run time) with a restarted broker has lost its own registration.
            let lost =
                name.map { core.registry.entry(named: $0)?.peer != peer } ?? !core.registry.isKnown(
                    peer: peer)
            if lost && !registering {
                core.send(peer, .disconnect(reason: "unknown peer: register again"))
            }
        case .register(let register): self.register(register, from: peer, id: id, in: &core)
        case .unregister(let request): unregister(request, from: peer, id: id, in: &core)
        case .list:
            let records = core.registry.entries.values.sorted { $0.registration.name < $1.registration.name }
            core.reply(peer, id, ["services": .array(records.map { core.record(of: $0).json })])
        case .attach(let token):
            if markers.hasSeen(token) {
                core.reply(peer, id, Self.attached(core))
            } else {
                wait(for: token, .attach(peer: peer, requestID: id), in: &core)
            }
        default: break
        }
    }

    static func hello(_ core: BrokerCore) -> JSONValue {
        let configuration = core.configuration
        let info = BrokerInfo(
            buses: core.busEndpoints, epoch: core.epoch, sequence: core.sequence, lifecycle: core.lifecycle,
            heartbeat: configuration.heartbeat, maximumMessageBytes: configuration.maximumMessageBytes,
            journal: BrokerInfo.Journal(
                events: core.journal.count, firstSequence: core.journal.firstRetainedSequence,
                capacity: configuration.journalCapacity,
                maximumAgeMilliseconds: configuration.journalMaximumAge.wholeMilliseconds),
            pid: core.identity.pid, host: core.identity.host, version: core.identity.version
        ).json
        guard case .object(var members) = info else { return info }
        members["requests"] = .int(Int64(truncatingIfNeeded: core.requestsHandled))
        members["curve"] = .bool(core.secure)
        return .object(members)
    }

    static func attached(_ core: BrokerCore) -> JSONValue {
        AttachReceipt(bus: core.bus, epoch: core.epoch, sequence: core.sequence, lifecycle: core.lifecycle)
            .json
    }

    // MARK: Markers

    /// A subscription notice from the XPUB socket: a marker releases what waited for it.
    mutating func busNotice(_ notice: [UInt8], in core: inout BrokerCore) {
        guard let marker = AttachTracker.token(inNotice: notice) else { return }
        guard marker.subscribed else {
            markers.markerUnsubscribed(marker.token)
            return
        }
        for key in markers.markerSubscribed(marker.token, now: core.nanoseconds) {
            guard let held = waiting.removeValue(forKey: key) else { continue }
            core.correlator.close(held.id)
            switch held.wait {
            case .attach(let peer, let requestID): core.reply(peer, requestID, Self.attached(core))
            case .register(let peer, let requestID, let register):
                completeRegistration(register, peer: peer, id: requestID, in: &core)
            }
        }
    }

    private mutating func wait(for token: String, _ wait: MarkerWait, in core: inout BrokerCore) {
        let key = keys.next()
        let id = core.correlator.open(
            .registry, key: key, peer: nil,
            deadline: core.deadline(core.configuration.attachTimeout))
        waiting[key] = (wait, token, id)
        markers.wait(for: token, key: key)
    }

    mutating func expired(_ wait: Correlator.Entry, in core: inout BrokerCore) {
        guard let held = waiting.removeValue(forKey: wait.key) else { return }
        markers.forget(held.token, key: wait.key)
        let (peer, requestID, what): ([UInt8], [UInt8], String)
        switch held.wait {
        case .attach(let p, let r): (peer, requestID, what) = (p, r, "ATTACH")
        case .register(let p, let r, let register):
            (peer, requestID, what) = (p, r, "REGISTER of '\(register.registration.name)'")
        }
        let message =
            "\(what) timed out: the bus subscription '!\(held.token)' did not arrive within "
            + "\(core.configuration.attachTimeout.wholeMilliseconds) ms; subscribe to it on \(core.busEndpoints.first ?? "the bus") first"
        core.log(message)
        core.fail(peer, requestID, .timeout, message)
    }

    // MARK: Registration

    private mutating func register(
        _ request: RegisterRequest, from peer: [UInt8], id: [UInt8], in core: inout BrokerCore
    ) {
        let registration = request.registration
        let window = Duration.milliseconds(
            registration.heartbeat.intervalMilliseconds * registration.heartbeat.liveness)
        if window > core.configuration.maximumHeartbeatWindow {
            core.refuse(
                peer,
                ProtocolError(
                    .badRequest,
                    "REGISTER heartbeat window of \(window.wholeMilliseconds) ms (intervalMs × liveness) exceeds the broker's limit of \(core.configuration.maximumHeartbeatWindow.wholeMilliseconds) ms",
                    requestID: id))
            return
        }
        let owned = core.registry.nameCount(of: peer)
        if core.registry.entry(named: registration.name)?.peer != peer,
            owned >= core.configuration.maximumNamesPerConnection
        {
            core.refuse(
                peer,
                ProtocolError(
                    .tooMany,
                    "this connection already registered \(owned) names, the broker's limit (--max-names-per-connection)",
                    requestID: id))
            return
        }
        if let existing = core.registry.entry(named: registration.name),
            existing.registration.instance != registration.instance
        {
            if case .refused(let reason, let retryAfter) = core.registry.admit(
                registration, peer: peer, now: core.nanoseconds)
            {
                core.log(
                    "refused registration of \(registration.name) by pid \(registration.pid): name taken")
                core.send(peer, Self.conflict(reason, retryAfter: retryAfter, requestID: id))
            }
            return
        }
        if markers.hasSeen(registration.attachToken) {
            completeRegistration(request, peer: peer, id: id, in: &core)
        } else {
            wait(for: registration.attachToken, .register(peer: peer, requestID: id, request), in: &core)
        }
    }

    /// Admits the service, replays what it missed (when it asked to resume), and answers with the state
    /// it starts from: lifecycle, sequence, and the last sequence of each of its events.
    private mutating func completeRegistration(
        _ request: RegisterRequest, peer: [UInt8], id: [UInt8], in core: inout BrokerCore
    ) {
        let registration = request.registration
        let previousPeer = core.registry.entry(named: registration.name)?.peer
        let admission = core.registry.admit(registration, peer: peer, now: core.nanoseconds)
        if admission == .renewed, let previousPeer { core.correlator.repoint(from: previousPeer, to: peer) }
        if case .refused(let reason, let retryAfter) = admission {
            core.send(peer, Self.conflict(reason, retryAfter: retryAfter, requestID: id))
            return
        }
        // The snapshot (and any replay) is taken before this registration's own serviceDidStart, which
        // then reaches the service live with the next sequence.
        var snapshot = JoinSnapshot(
            epoch: core.epoch, sequence: core.sequence, lifecycle: core.lifecycle, bus: core.bus,
            heartbeat: core.configuration.heartbeat, topics: core.topicPositions(for: registration.events))
        if let resume = request.resume {
            let plan = Replay.plan(after: resume.sequence, epoch: resume.epoch, in: core)
            snapshot.gap = plan.gap
            if let after = plan.replayAfter {
                let events = Replay.send(after: after, names: Set(registration.events), to: peer, in: &core)
                snapshot.replayed = events
                if events > 0 {
                    core.log(
                        "replayed \(events) events to \(registration.name) after #\(after) of epoch \(core.epoch)"
                    )
                }
            }
        }
        if admission == .added {
            core.log(
                "registered \(registration.name) (pid \(registration.pid) on \(registration.host); events: \(registration.events.count), methods: \(registration.methods.count))"
            )
            core.publishRuntime(
                .serviceDidStart,
                [
                    "name": .string(registration.name), "pid": .int(Int64(registration.pid)),
                    "host": .string(registration.host),
                ])
        } else {
            core.log("\(registration.name) (pid \(registration.pid)) registered again after a reconnect")
        }
        core.reply(peer, id, snapshot.json)
        core.announce(.registered(registration, renewed: admission == .renewed))
    }

    /// A 409 for a taken name, with how long until the holder would expire if it has died.
    static func conflict(_ reason: String, retryAfter: Int64, requestID: [UInt8]) -> ControlReply {
        ControlReply(
            requestID: requestID, status: .conflict,
            json: ["error": .string(reason), "retryAfterMs": .int(retryAfter)])
    }

    private mutating func unregister(
        _ request: UnregisterRequest, from peer: [UInt8], id: [UInt8], in core: inout BrokerCore
    ) {
        guard let entry = core.registry.entry(named: request.name) else {
            core.fail(peer, id, .notFound, "no service named '\(request.name)'")
            return
        }
        guard entry.peer == peer || request.instance == entry.registration.instance else {
            core.fail(
                peer, id, .forbidden,
                "service '\(request.name)' belongs to pid \(entry.registration.pid) on '\(entry.registration.host)'; only its owner may unregister it"
            )
            return
        }
        core.registry.remove(request.name)
        core.log("unregistered \(request.name) (pid \(entry.registration.pid))")
        core.announce(.gone(entry.registration, reason: .unregistered))
        core.reply(peer, id, ["name": .string(request.name)])
    }

    /// Drops every name of `peers` (their key left the policy) and tells them why.
    mutating func revoke(_ peers: Set<[UInt8]>, in core: inout BrokerCore) {
        let names = core.registry.entries.values.filter { peers.contains($0.peer) }.map(\.registration.name)
        for name in names.sorted() {
            guard let entry = core.registry.remove(name) else { continue }
            core.log("dropped \(name) (pid \(entry.registration.pid)): its key left the policy")
            core.announce(.gone(entry.registration, reason: .revoked))
        }
        let frames = BrokerRequest.disconnect(reason: "your key is no longer allowed").controlRequest()
            .frames()
        for peer in peers { core.output.append(.send(peer: peer, frames: frames)) }
    }

    // MARK: Expiry

    /// Drops the services silent for longer than their heartbeat window.
    mutating func expireSilent(in core: inout BrokerCore) {
        for entry in core.registry.removeExpired(now: core.nanoseconds) {
            let silence = entry.registration.heartbeat.expiryNanoseconds / 1_000_000
            core.log(
                "service \(entry.registration.name) (pid \(entry.registration.pid)) expired: silent for \(silence) ms"
            )
            core.announce(.gone(entry.registration, reason: .expired))
        }
    }

    mutating func react(to announcement: Announcement, in core: inout BrokerCore) {
        guard case .gone(let registration, let reason) = announcement else { return }
        core.publishRuntime(
            .serviceDidStop, ["name": .string(registration.name), "reason": .string(reason.rawValue)])
    }
}
