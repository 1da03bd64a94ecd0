import LifelineProtocol

/// Actors by key: a CALL naming a key goes to the one instance its key is placed on. The first call
/// places a key on the connected instance with the fewest keys; the placement stays until that
/// instance released the key (RELEASE, or a clean UNREGISTER after deactivating its actors) or can no
/// longer run it (its heartbeat window passed). Until then a call to the key waits, within its
/// deadline: for the instance to come back, or for the key to move.
extension ServicesFeature {
    /// Why a keyed call cannot be made (400), or nil.
    static func keyedProblem(_ call: ServiceCall, keyed: [String]) -> String? {
        let isKeyed = keyed.contains(call.method)
        if call.key != nil && keyed.isEmpty {
            return
                "service '\(call.service)' hosts no actors by key: call it as '\(call.service)', without a key"
        }
        if call.key != nil && !isKeyed {
            return
                "'\(call.method)' of '\(call.service)' is not a method of its actors by key (\(keyed.joined(separator: ", "))): call it without a key"
        }
        if call.key == nil && isKeyed {
            return
                "'\(call.method)' of '\(call.service)' is a method of its actors by key: call it as '\(call.service)/KEY'"
        }
        return nil
    }

    /// Until when no new key is placed: for a heartbeat window after the broker started (or its
    /// group's rejoin window), instances that held keys for the previous broker register again and
    /// say which (REGISTER `holding`), or drop them (they fence themselves when the broker is silent).
    static func placingFrom(_ core: BrokerCore) -> MonotonicInstant {
        let grace =
            core.startedAt + .milliseconds(Int64(core.configuration.heartbeat.expiryNanoseconds / 1_000_000))
        guard let rejoining = core.rejoining, rejoining.after == .takeover else { return grace }
        return max(grace, rejoining.until)
    }

    /// Sends `forwarded` (a call with a key) to the instance its key is placed on, placing it first
    /// when it is nowhere; or holds it while the key cannot be placed yet.
    mutating func routeKeyed(_ forwarded: ForwardedCall, in core: inout BrokerCore) {
        var forwarded = forwarded
        guard let key = forwarded.call.key, let entry = core.registry.entry(named: forwarded.service) else {
            core.fail(
                forwarded.client, forwarded.clientRequestID, .unavailable,
                "service '\(forwarded.service)' went away before \(forwarded.call.address) could be placed")
            return
        }
        let service = forwarded.service
        if forwarded.deadline <= core.now {
            // Retried in the step its deadline passed, before the correlator said so.
            heldExpired(forwarded, in: &core)
            return
        }
        if let placement = placements.placement(of: service, key: key) {
            if let instance = entry.instances.first(where: { $0.id == placement.instance }) {
                if instance.connected {
                    forwarded.placedOn = placement.instance
                    placements.count(service, key: key, instance: placement.instance, by: 1)
                    send(&forwarded, to: instance.peer, key: keys.next(), in: &core)
                } else {
                    hold(
                        forwarded,
                        because:
                            "the actor's instance went away and its heartbeat window has not passed yet, so the key could not move",
                        in: &core)
                }
                return
            }
            // Its instance left the registry and may still run it: a call sent there is not past its
            // deadline, or the instance is retiring (its departure's timer then places the key anew).
            if placement.busyUntil > core.nanoseconds
                || retiringInstances.values.contains(where: { $0 == (service, placement.instance) })
            {
                hold(
                    forwarded,
                    because:
                        "the actor's instance went away while it may still run it (revoked within its heartbeat window, or with a call sent there before its deadline), so the key could not move",
                    in: &core)
                return
            }
            placements.forget(service, key: key)
        }
        if core.now < Self.placingFrom(core) {
            holdUntilPlacing(forwarded, in: &core)
            return
        }
        let connected = entry.instances.filter(\.connected)
        guard
            let chosen = connected.min(by: {
                let (left, right) = (
                    placements.activations(of: service, on: $0.id),
                    placements.activations(of: service, on: $1.id)
                )
                return left != right ? left < right : $0.inFlight < $1.inFlight
            })
        else {
            // Instances that are cut off may come back (or expire) within the deadline.
            hold(
                forwarded, because: "no instance of '\(service)' is connected to place the key on", in: &core)
            return
        }
        placements.place(service, key: key, on: chosen.id, peer: chosen.peer, now: core.nanoseconds)
        forwarded.placedOn = chosen.id
        placements.count(service, key: key, instance: chosen.id, by: 1)
        send(&forwarded, to: chosen.peer, key: keys.next(), in: &core)
    }

    /// Holds a keyed call until its key can be placed, or its deadline.
    private mutating func hold(_ forwarded: ForwardedCall, because reason: String, in core: inout BrokerCore)
    {
        var forwarded = forwarded
        forwarded.heldBecause = reason
        let key = keys.next()
        moving[key] = forwarded
        _ = core.correlator.open(.services, key: key, peer: nil, deadline: forwarded.deadline)
    }

    /// Holds a keyed call until the broker places keys (the end of its first heartbeat window).
    private mutating func holdUntilPlacing(_ forwarded: ForwardedCall, in core: inout BrokerCore) {
        hold(
            forwarded,
            because:
                "the broker started or took over its group less than a heartbeat window ago and places no key anew until its instances have registered again",
            in: &core)
        if placingTimer == nil {
            let key = keys.next()
            placingTimer = key
            _ = core.correlator.open(.services, key: key, peer: nil, deadline: Self.placingFrom(core))
        }
    }

    /// Sends the held calls of `service` (every service: nil) again through ``routeKeyed(_:in:)``.
    mutating func retryHeld(of service: String?, in core: inout BrokerCore) {
        for key in moving.keys.sorted() {
            guard let call = moving[key], service == nil || call.service == service,
                // A name whose last instance just left: its `gone`, next, fails them with the reason.
                core.registry.entry(named: call.service) != nil
            else { continue }
            moving[key] = nil
            core.correlator.close(owner: .services, key: key)
            routeKeyed(call, in: &core)
        }
    }

    /// A held call's deadline passed.
    mutating func heldExpired(_ call: ForwardedCall, in core: inout BrokerCore) {
        let message =
            "\(call.call.address).\(call.method) did not answer within \(call.timeoutMilliseconds) ms: \(call.heldBecause ?? "its key could not be placed") (retry)"
        core.log("call timed out: \(message)")
        core.stats.recordCall(
            service: call.service, method: call.method, nanoseconds: core.nanoseconds &- call.forwardedAt,
            success: false, timedOut: true)
        core.fail(call.client, call.clientRequestID, .timeout, message)
    }

    /// The instance `instance` of `service` left (`reason`): its keys are forgotten at once when it
    /// deactivated them (a clean leave) or cannot run them any more (its window passed); after a
    /// revocation they stay placed for one heartbeat window more (the process may still run them).
    mutating func instanceDeparted(
        _ service: String, instance: String, reason: Departure, window: UInt64, in core: inout BrokerCore
    ) {
        guard placements.activations(of: service, on: instance) > 0 else { return }
        // A call the broker stopped waiting for may still run there until its deadline.
        var until = placements.busyUntil(of: service, on: instance)
        if reason == .revoked { until = max(until, core.nanoseconds &+ window) }
        if until > core.nanoseconds {
            let key = keys.next()
            retiringInstances[key] = (service, instance)
            _ = core.correlator.open(
                .services, key: key, peer: nil, deadline: MonotonicInstant(nanoseconds: until))
            core.log(
                "\(service): the actor keys of instance \(instance) (\(reason.rawValue)) move in \((until - core.nanoseconds) / 1_000_000) ms, when no call sent there can still run"
            )
            // The calls held for its keys stay held, now for that reason.
            retryHeld(of: service, in: &core)
            return
        }
        let keys = placements.forgetAll(of: service, on: instance)
        core.log(
            "\(service): \(keys.count) actor key(s) of instance \(instance) (\(reason.rawValue)) may move now"
        )
        retryHeld(of: service, in: &core)
    }

    /// A departed instance can run none of its keys any more (a revoked one's window passed, the
    /// deadlines of calls sent there passed): they may move.
    mutating func retired(_ service: String, instance: String, in core: inout BrokerCore) {
        let keys = placements.forgetAll(of: service, on: instance)
        if !keys.isEmpty {
            core.log("\(service): \(keys.count) actor key(s) of departed instance \(instance) may move now")
        }
        retryHeld(of: service, in: &core)
    }

    /// An instance registered (again) saying which keys it still holds: they stay (or become) placed
    /// on it. A key placed on another instance stays there, and the conflict is logged.
    mutating func adopt(
        _ registration: ServiceRegistration, keys: [String], from peer: [UInt8], in core: inout BrokerCore
    ) {
        let service = registration.name
        let instance = registration.instance
        placements.move(service, instance: instance, to: peer)
        for key in keys {
            if let placed = placements.placement(of: service, key: key), placed.instance != instance {
                core.log(
                    "\(service)/\(key): instance \(instance) says it holds the actor, which is placed on \(placed.instance); it stays there"
                )
                continue
            }
            placements.place(service, key: key, on: instance, peer: peer, now: core.nanoseconds)
        }
        // Calls held for the keys it holds go to it now, even within the broker's first window.
        retryHeld(of: service, in: &core)
    }

    /// RELEASE: the instance on `peer` deactivated `key`; forgotten unless a call to it is on its way
    /// (then the instance keeps it: `released` false).
    mutating func release(
        service: String, key: String, from peer: [UInt8], id: [UInt8], in core: inout BrokerCore
    ) {
        guard let entry = core.registry.entry(named: service), let index = entry.index(of: peer) else {
            core.fail(peer, id, .forbidden, "RELEASE: this connection serves no instance of '\(service)'")
            return
        }
        let instance = entry.instances[index].id
        guard let placement = placements.placement(of: service, key: key), placement.instance == instance
        else {
            core.reply(peer, id, ReleaseReply(released: true))
            return
        }
        guard placement.inFlight == 0 else {
            core.reply(peer, id, ReleaseReply(released: false, inFlight: placement.inFlight))
            return
        }
        placements.forget(service, key: key)
        core.reply(peer, id, ReleaseReply(released: true))
        retryHeld(of: service, in: &core)
    }

    /// ACTORS: the placements of `service` (every service: nil).
    func listActors(_ service: String?, from peer: [UInt8], id: [UInt8], in core: inout BrokerCore) {
        if let service {
            guard let entry = core.registry.entry(named: service) else {
                core.failMissingService(peer, id, service)
                return
            }
            if entry.registration.keyedMethods.isEmpty {
                core.fail(peer, id, .badRequest, "service '\(service)' hosts no actors by key")
                return
            }
        }
        var list: [JSONValue] = []
        for name in placements.byService.keys.sorted() where service == nil || service == name {
            let instances = core.registry.entry(named: name)?.instances ?? []
            for (key, placement) in placements.byService[name]!.sorted(by: { $0.key < $1.key }) {
                let instance = instances.first { $0.id == placement.instance }
                list.append(
                    ActorPlacement(
                        service: name, key: key, instance: placement.instance,
                        host: instance?.registration.host ?? "", pid: instance?.registration.pid ?? 0,
                        sinceMilliseconds: Int64(
                            core.wall(at: MonotonicInstant(nanoseconds: placement.since)) / 1_000_000),
                        calls: placement.calls, inFlight: placement.inFlight,
                        waiting: instance?.connected != true
                    ).json)
            }
        }
        core.reply(peer, id, ["actors": .array(list)])
    }
}
