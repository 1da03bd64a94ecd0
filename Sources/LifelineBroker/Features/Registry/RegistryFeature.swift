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
        case .heartbeat(let heartbeat):
            if heartbeat.dropped != nil || heartbeat.queued != nil || heartbeat.handled != nil
                || heartbeat.undecodable != nil || heartbeat.failed != nil
            {
                core.registry.report(
                    dropped: heartbeat.dropped, queued: heartbeat.queued, handled: heartbeat.handled,
                    undecodable: heartbeat.undecodable, failed: heartbeat.failed, peer: peer)
            }
            let registering = waiting.values.contains {
                if case .register(let waiting, _, _) = $0.wait { return waiting == peer }
                return false
            }
            // A connection that names its service must hold it: one that registered only other
            // names (at run time) with a restarted broker has lost its own registration.
            let lost =
                heartbeat.name.map { !core.registry.holds($0, peer: peer) } ?? !core.registry.isKnown(
                    peer: peer)
            if lost && !registering {
                core.send(peer, .disconnect(reason: "unknown peer: register again"))
            }
        case .register(let register): self.register(register, from: peer, id: id, in: &core)
        case .unregister(let request): unregister(request, from: peer, id: id, in: &core)
        case .list:
            let records = core.registry.entries.values.sorted { $0.registration.name < $1.registration.name }
            core.reply(peer, id, ServiceList(services: records.map { core.record(of: $0) }))
        case .attach(let attach):
            let token = attach.token
            if markers.hasSeen(token, by: core.peerKeys[peer]) {
                core.reply(
                    peer, id,
                    Self.attached(core, refused: markers.refusals(of: token, by: core.peerKeys[peer])))
            } else {
                wait(for: token, .attach(peer: peer, requestID: id), in: &core)
            }
        default: break
        }
    }

    static func hello(_ core: BrokerCore) -> BrokerInfo {
        let configuration = core.configuration
        var info = BrokerInfo(
            buses: core.busEndpoints, epoch: core.epoch, sequence: core.sequence, lifecycle: core.lifecycle,
            heartbeat: configuration.heartbeat, maximumMessageBytes: configuration.maximumMessageBytes,
            journal: BrokerInfo.Journal(
                events: core.journal.count, firstSequence: core.journal.firstRetainedSequence,
                capacity: configuration.journalCapacity,
                maximumAgeMilliseconds: configuration.journalMaximumAge.wholeMilliseconds),
            pid: core.identity.pid, host: core.identity.host, version: core.identity.version)
        info.requestsHandled = UInt64(truncatingIfNeeded: core.requestsHandled)
        info.secure = core.secure
        return info
    }

    static func attached(_ core: BrokerCore, refused: [String]) -> AttachReceipt {
        var receipt = AttachReceipt(
            bus: core.bus, epoch: core.epoch, sequence: core.sequence, lifecycle: core.lifecycle)
        receipt.refused = refused.isEmpty ? nil : refused
        return receipt
    }

    // MARK: Markers

    /// A subscription notice from the XPUB socket: a marker releases what waited for it (under CURVE,
    /// what `subscriber`'s key asked). `refused` says why the subscriptions its connection sent
    /// before it were refused.
    mutating func busNotice(
        _ notice: [UInt8], refused: [String], subscriber: String?, in core: inout BrokerCore
    ) {
        guard let marker = AttachTracker.token(inNotice: notice) else { return }
        guard marker.subscribed else {
            markers.markerUnsubscribed(marker.token, owner: subscriber)
            return
        }
        for key in markers.markerSubscribed(
            marker.token, refused: refused, owner: subscriber, now: core.nanoseconds)
        {
            guard let held = waiting.removeValue(forKey: key) else { continue }
            core.correlator.close(held.id)
            switch held.wait {
            case .attach(let peer, let requestID):
                core.reply(peer, requestID, Self.attached(core, refused: refused))
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
        let peer: [UInt8]
        switch wait {
        case .attach(let from, _), .register(let from, _, _): peer = from
        }
        markers.wait(for: token, key: key, owner: core.peerKeys[peer])
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
        if !core.registry.holds(registration.name, peer: peer),
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
        // Checked again when the marker has arrived; a refusal here spares the wait.
        if let refusal = core.registry.refusal(
            of: registration, peer: peer, owner: core.peerKeys[peer], now: core.nanoseconds)
        {
            switch refusal {
            case .refused(let reason, let retryAfter):
                core.log(
                    "refused registration of \(registration.name) by pid \(registration.pid): name taken")
                core.send(peer, Self.conflict(reason, retryAfter: retryAfter, requestID: id))
                return
            case .foreign(let owner):
                refuseForeign(registration.name, owner: owner, peer: peer, id: id, in: &core)
                return
            case .differs(let reason):
                refuseDifferent(reason, peer: peer, id: id, in: &core)
                return
            default: break
            }
        }
        if markers.hasSeen(registration.attachToken, by: core.peerKeys[peer]) {
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
        // The policy may have changed (or the key been revoked) while it waited for its marker.
        if let policy = core.policy {
            let denial =
                core.peerKeys[peer].map { key in
                    policy.denial(publicKey: key, .register(registration.name))
                        ?? registration.events.lazy.compactMap {
                            policy.denial(publicKey: key, .subscribe($0.rawValue))
                        }.first
                } ?? "this connection's key is no longer in the policy"
            if let denial {
                core.fail(
                    peer, id, .forbidden, denial,
                    logLine: "denied REGISTER from \(core.peerName(peer)): \(denial)")
                return
            }
        }
        let previousPeer = core.registry.entry(named: registration.name)?.instances.first {
            $0.id == registration.instance
        }?.peer
        let admission = core.registry.admit(
            registration, peer: peer, owner: core.peerKeys[peer], now: core.nanoseconds)
        if admission == .renewed, let previousPeer { core.correlator.repoint(from: previousPeer, to: peer) }
        switch admission {
        case .refused(let reason, let retryAfter):
            core.send(peer, Self.conflict(reason, retryAfter: retryAfter, requestID: id))
            return
        case .foreign(let owner):
            refuseForeign(registration.name, owner: owner, peer: peer, id: id, in: &core)
            return
        case .differs(let reason):
            refuseDifferent(reason, peer: peer, id: id, in: &core)
            return
        case .added, .renewed, .joined: break
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
                // Shared events are not replayed: the name's own queue holds what its instances missed.
                let names = Set(registration.events).subtracting(registration.shared)
                let events = Replay.send(after: after, names: names, to: peer, in: &core)
                snapshot.replayed = events
                if events > 0 {
                    core.log(
                        "replayed \(events) events to \(registration.name) after #\(after) of epoch \(core.epoch)"
                    )
                }
            }
        }
        switch admission {
        case .added:
            core.stats.serviceJoined(registration.name)
            core.log(
                "registered \(registration.name) (pid \(registration.pid) on \(registration.host); events: \(registration.events.count), methods: \(registration.methods.count))"
            )
            core.publishRuntime(
                .serviceDidStart,
                [
                    "name": .string(registration.name), "pid": .int(Int64(registration.pid)),
                    "host": .string(registration.host),
                ])
            if registration.replicable { Self.publishJoin(registration, instances: 1, in: &core) }
        case .joined(let instances):
            core.log(
                "\(registration.name): instance \(registration.instance) joined (pid \(registration.pid) on \(registration.host)); \(instances) instances"
            )
            Self.publishJoin(registration, instances: instances, in: &core)
        default:
            core.log("\(registration.name) (pid \(registration.pid)) registered again after a reconnect")
        }
        core.reply(peer, id, snapshot)
        if !registration.keyedMethods.isEmpty {
            core.announce(.holding(registration, peer: peer, keys: request.holding))
        }
        if case .joined(let instances) = admission {
            core.announce(.instanceJoined(registration, peer: peer, instances: instances))
        } else {
            core.announce(.registered(registration, renewed: admission == .renewed))
        }
    }

    private static func publishJoin(
        _ registration: ServiceRegistration, instances: Int, in core: inout BrokerCore
    ) {
        core.publishRuntime(
            .serviceInstanceDidJoin,
            [
                "name": .string(registration.name), "instance": .string(registration.instance),
                "pid": .int(Int64(registration.pid)), "host": .string(registration.host),
                "instances": .int(Int64(instances)),
            ])
    }

    /// A 409 for an instance whose registration differs from its name's, saying how.
    private func refuseDifferent(_ reason: String, peer: [UInt8], id: [UInt8], in core: inout BrokerCore) {
        core.fail(peer, id, .conflict, reason, logLine: "refused an instance: \(reason)")
    }

    /// A 409 for a taken name, with how long until the holder would expire if it has died.
    static func conflict(_ reason: String, retryAfter: Int64, requestID: [UInt8]) -> ControlReply {
        ControlReply(
            requestID: requestID, status: .conflict,
            body: ErrorReply(reason, retryAfterMilliseconds: Int(clamping: max(0, retryAfter))).bytes)
    }

    /// A 403 for a name another key owns: it names the owner and the rule, and changes nothing.
    private func refuseForeign(
        _ name: String, owner: String?, peer: [UInt8], id: [UInt8], in core: inout BrokerCore
    ) {
        let message = Self.foreignMessage(
            name, owner: owner, requester: core.peerKeys[peer], action: "register, replace or heartbeat", core
        )
        core.log("denied REGISTER from \(core.peerName(peer)): \(message)")
        // When the owner has gone silent (a crashed process whose key was rotated, say) the name
        // expires: say when, so that its successor may try once more then.
        var body = ErrorReply(message)
        if core.registry.entry(named: name) != nil {
            body.retryAfterMilliseconds = core.registry.milliseconds(
                untilExpiryOf: name, now: core.nanoseconds)
        }
        core.send(peer, ControlReply(requestID: id, status: .forbidden, body: body.bytes))
    }

    static func foreignMessage(
        _ name: String, owner: String?, requester: String?, action: String, _ core: BrokerCore
    ) -> String {
        let ownerName = owner.map { "key \(core.keyName($0))" } ?? "another connection"
        let requesterName = requester.map { "key \(core.keyName($0))" } ?? "this connection"
        return
            "service '\(name)' belongs to \(ownerName): a name belongs to the key that registered it, and \(requesterName) may not \(action) it"
    }
}
