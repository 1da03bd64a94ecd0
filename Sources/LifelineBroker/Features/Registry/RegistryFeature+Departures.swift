import LifelineProtocol

/// How names and instances leave the registry: UNREGISTER, a revoked key, a policy reload, silent
/// expiry; and what the registry publishes when they do (`serviceDidStop`, `serviceInstanceDidLeave`).
extension RegistryFeature {
    mutating func unregister(
        _ request: UnregisterRequest, from peer: [UInt8], id: [UInt8], in core: inout BrokerCore
    ) {
        guard let entry = core.registry.entry(named: request.name) else {
            core.fail(peer, id, .notFound, "no service named '\(request.name)'")
            return
        }
        let key = core.peerKeys[peer]
        guard entry.index(of: peer) != nil || (key != nil && entry.owner == key) else {
            let message =
                entry.owner != nil && entry.owner != key
                ? Self.foreignMessage(
                    request.name, owner: entry.owner, requester: key, action: "unregister", core)
                : "service '\(request.name)' belongs to another connection (pid \(entry.registration.pid) on '\(entry.registration.host)'); only the connection that registered it may unregister it"
            core.fail(
                peer, id, .forbidden, message,
                logLine: "denied UNREGISTER from \(core.peerName(peer)): \(message)")
            return
        }
        // The connection's own instance, or the one the request names; the owner's key from another
        // connection, naming no instance of the name, takes them all.
        let instancePeer =
            entry.index(of: peer).map { entry.instances[$0].peer }
            ?? entry.instances.first { $0.id == request.instance }?.peer
        if let instancePeer, let left = core.registry.removeInstance(of: request.name, on: instancePeer) {
            core.log("unregistered \(request.name) (pid \(left.instance.registration.pid))")
            announce(left, reason: .unregistered, in: &core)
        } else {
            core.registry.remove(request.name)
            core.log("unregistered \(request.name) (every instance)")
            announceAll(entry, reason: .unregistered, in: &core)
        }
        core.reply(peer, id, ["name": .string(request.name)])
    }

    /// Drops every name owned by the public keys `keys` (they left the policy) or registered by
    /// `peers` (which spoke with them), and tells those peers why (DISCONNECT).
    mutating func revoke(
        keys: Set<String>, peers: Set<[UInt8]>, policy: AccessPolicy?, in core: inout BrokerCore
    ) {
        let entries = core.registry.entries.values.filter {
            $0.instances.contains { peers.contains($0.peer) } || $0.owner.map { keys.contains($0) } == true
        }
        var told = peers
        for entry in entries.sorted(by: { $0.registration.name < $1.registration.name }) {
            guard core.registry.remove(entry.registration.name) != nil else { continue }
            told.formUnion(entry.instances.map(\.peer))
            core.log(
                "dropped \(entry.registration.name) (pid \(entry.registration.pid)): its key left the policy")
            announceAll(entry, reason: .revoked, in: &core)
        }
        for peer in told {
            let name = core.peerKeys[peer].flatMap { policy?.names[$0] }
            core.send(
                peer,
                .disconnect(
                    reason:
                        "revoked: your key\(name.map { " ('\($0)')" } ?? "") is no longer in the broker's policy"
                ))
        }
    }

    /// Drops the registrations in `refused` (name → why the policy now refuses it) and tells their
    /// peers why (DISCONNECT: the library registers again, and stops at the 403).
    mutating func drop(_ refused: [String: String], in core: inout BrokerCore) {
        for (name, denial) in refused.sorted(by: { $0.key < $1.key }) {
            guard let entry = core.registry.remove(name) else { continue }
            core.log("dropped \(name) (pid \(entry.registration.pid)) at the reload: \(denial)")
            announceAll(entry, reason: .revoked, in: &core)
            for instance in entry.instances {
                core.send(instance.peer, .disconnect(reason: "revoked: \(denial)"))
            }
        }
    }

    // MARK: Expiry

    /// Drops the services silent for longer than their heartbeat window.
    mutating func expireSilent(in core: inout BrokerCore) {
        for left in core.registry.removeExpired(now: core.nanoseconds) {
            let registration = left.instance.registration
            let silence = (core.nanoseconds &- left.instance.lastSeen) / 1_000_000
            core.log(
                "service \(registration.name) (pid \(registration.pid)) expired: silent for \(silence) ms")
            announce(left, reason: .expired, in: &core)
        }
    }

    /// Tells the features that an instance left: the name too when it was the last.
    private func announce(_ left: ServiceRegistry.LeftInstance, reason: Departure, in core: inout BrokerCore)
    {
        if let registration = left.lastOf {
            if registration.replicable {
                core.announce(
                    .instanceLeft(registration, peer: left.instance.peer, reason: reason, remaining: 0))
            }
            core.announce(.gone(registration, reason: reason))
        } else {
            core.announce(
                .instanceLeft(
                    left.instance.registration, peer: left.instance.peer, reason: reason,
                    remaining: left.remaining))
        }
    }

    /// Tells the features that a name left with all its instances.
    private func announceAll(_ entry: ServiceRegistry.Entry, reason: Departure, in core: inout BrokerCore) {
        if entry.registration.replicable {
            for (index, instance) in entry.instances.enumerated().reversed() {
                core.announce(
                    .instanceLeft(
                        instance.registration, peer: instance.peer, reason: reason, remaining: index))
            }
        }
        core.announce(.gone(entry.registration, reason: reason))
    }

    mutating func react(to announcement: Announcement, in core: inout BrokerCore) {
        switch announcement {
        case .gone(let registration, let reason):
            core.stats.serviceLeft(registration.name)
            core.publishRuntime(
                .serviceDidStop, ["name": .string(registration.name), "reason": .string(reason.rawValue)])
        case .instanceLeft(let registration, _, let reason, let remaining):
            core.publishRuntime(
                .serviceInstanceDidLeave,
                [
                    "name": .string(registration.name), "instance": .string(registration.instance),
                    "pid": .int(Int64(registration.pid)), "host": .string(registration.host),
                    "reason": .string(reason.rawValue), "instances": .int(Int64(remaining)),
                ])
        default: break
        }
    }
}
