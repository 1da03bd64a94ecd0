import LifelineProtocol

/// LOOKUP and CALL, and the services' start hooks (DTService start): a CALL is forwarded to the
/// service — to the instance with the fewest calls in flight, when it has several — and its answer
/// passed back unchanged within a deadline; when that instance goes away first, an idempotent call is
/// sent to another within the same deadline and any other fails at once. A non-lazy service is
/// STARTed when it registers after the boot (or when the boot ends), a lazy one on its first LOOKUP
/// or CALL, which wait for it; every further instance of a started service is STARTed as it joins.
struct ServicesFeature: BrokerFeature {
    /// A call forwarded to a service and not yet answered.
    struct ForwardedCall {
        var client: [UInt8]
        var clientRequestID: [UInt8]
        var call: ServiceCall
        var timeoutMilliseconds: Int
        var forwardedAt: UInt64
        var deadline: MonotonicInstant
        var idempotent: Bool
        /// The instances it was sent to, the one answering it last.
        var tried: [[UInt8]]
        /// The instance id its key is placed on (a call to an actor by key).
        var placedOn: String? = nil
        /// Why a call to an actor by key waits (what its 504 says when its deadline passes first).
        var heldBecause: String? = nil

        var service: String { call.service }
        var method: String { call.method }
    }

    private var calls: [UInt64: ForwardedCall] = [:]
    /// START requests in flight: key → service.
    private var starting: [UInt64: String] = [:]
    /// START requests in flight to instances after the first: key → service.
    private var startingInstances: [UInt64: String] = [:]
    /// Instances of a started name that did not get START (their connection had closed), by name:
    /// each gets it when it registers again.
    private var startOwed: [String: Set<String>] = [:]
    /// Requests that wait for a lazy service's start.
    private var parked: [String: [(peer: [UInt8], id: [UInt8], request: ClientRequest)]] = [:]
    var keys = KeyCounter()
    /// Where each actor by key is placed.
    var placements = ActorPlacements()
    /// Calls to actors by key that wait for their key to be placed: correlator key → call.
    var moving: [UInt64: ForwardedCall] = [:]
    /// Revoked instances whose keys stay placed until their heartbeat window passes: timer → instance.
    var retiringInstances: [UInt64: (service: String, instance: String)] = [:]
    /// The wake-up at the end of the broker's first window, when held calls may place keys.
    var placingTimer: UInt64?

    mutating func handle(_ request: ClientRequest, from peer: [UInt8], id: [UInt8], in core: inout BrokerCore)
    {
        switch request {
        case .lookup(let lookup):
            let name = lookup.name
            guard let entry = core.registry.entry(named: name) else {
                core.failMissingService(peer, id, name)
                return
            }
            if park(request, for: name, from: peer, id: id, in: &core) { return }
            core.reply(peer, id, core.record(of: entry))
        case .call(let call): forward(call, from: peer, id: id, in: &core)
        case .release(let release):
            self.release(service: release.service, key: release.key, from: peer, id: id, in: &core)
        case .actors(let actors): listActors(actors.service, from: peer, id: id, in: &core)
        default: break
        }
    }

    private mutating func forward(
        _ call: ServiceCall, from peer: [UInt8], id: [UInt8], in core: inout BrokerCore
    ) {
        let timeout = call.timeoutMilliseconds ?? core.configuration.defaultCallTimeout.wholeMilliseconds
        guard timeout <= core.configuration.maximumCallTimeout.wholeMilliseconds else {
            core.refuse(
                peer,
                ProtocolError(
                    .badRequest,
                    "CALL timeoutMs must be an integer within 1...\(core.configuration.maximumCallTimeout.wholeMilliseconds)",
                    requestID: id))
            return
        }
        guard let entry = core.registry.entry(named: call.service) else {
            core.failMissingService(peer, id, call.service)
            return
        }
        if park(.call(call), for: call.service, from: peer, id: id, in: &core) { return }
        guard entry.registration.methods.contains(call.method) else {
            let methods = entry.registration.methods
            let known = methods.isEmpty ? "none" : methods.joined(separator: ", ")
            core.fail(
                peer, id, .notFound,
                "service '\(call.service)' has no method '\(call.method)'; it answers: \(known)")
            return
        }
        if let problem = Self.keyedProblem(call, keyed: entry.registration.keyedMethods) {
            core.fail(peer, id, .badRequest, problem)
            return
        }
        if call.key != nil {
            routeKeyed(
                ForwardedCall(
                    client: peer, clientRequestID: id, call: call, timeoutMilliseconds: timeout,
                    forwardedAt: core.nanoseconds, deadline: core.deadline(timeout),
                    idempotent: entry.registration.idempotent.contains(call.method), tried: []),
                in: &core)
            return
        }
        guard let instance = core.registry.instanceForCall(of: call.service) else {
            core.fail(
                peer, id, .unavailable,
                "service '\(call.service)' has no connected instance: its connection closed; it may be restarting"
            )
            return
        }
        var forwarded = ForwardedCall(
            client: peer, clientRequestID: id, call: call, timeoutMilliseconds: timeout,
            forwardedAt: core.nanoseconds, deadline: core.deadline(timeout),
            idempotent: entry.registration.idempotent.contains(call.method), tried: [])
        send(&forwarded, to: instance, key: keys.next(), in: &core)
    }

    /// Sends `forwarded` to the instance on `instance`, with what is left of its deadline.
    mutating func send(
        _ forwarded: inout ForwardedCall, to instance: [UInt8], key: UInt64, in core: inout BrokerCore
    ) {
        forwarded.tried.append(instance)
        calls[key] = forwarded
        core.registry.changeLoad(of: forwarded.service, on: instance, by: 1)
        let forwardID = core.correlator.open(
            .services, key: key, peer: instance, deadline: forwarded.deadline)
        var call = forwarded.call
        call.timeoutMilliseconds = max(
            1, Int((forwarded.deadline.nanoseconds &- core.now.nanoseconds) / 1_000_000))
        core.send(instance, frames: call.frames(id: forwardID))
    }

    /// The instance on `peer` went away (`why`) with calls in flight: an idempotent one goes to another
    /// instance within its deadline, any other fails at once.
    private mutating func instanceLost(
        _ peer: [UInt8], names: Set<String>, why: String, in core: inout BrokerCore
    ) {
        for key in calls.keys.sorted() {
            guard var call = calls[key], names.contains(call.service),
                core.correlator.peer(owner: .services, key: key) == peer
            else { continue }
            calls[key] = nil
            core.correlator.close(owner: .services, key: key)
            core.registry.changeLoad(of: call.service, on: peer, by: -1)
            if let placedOn = call.placedOn, let actor = call.call.key {
                placements.count(call.service, key: actor, instance: placedOn, by: -1)
                // The process may still be running it: the key stays there until its deadline.
                placements.markBusy(
                    call.service, key: actor, instance: placedOn, until: call.deadline.nanoseconds)
                if call.idempotent {
                    // The key stays where it is until its instance comes back or expires.
                    core.log(
                        "\(call.call.address).\(call.method): its instance \(why); it waits for the key to move"
                    )
                    routeKeyed(call, in: &core)
                    continue
                }
            }
            if call.idempotent, call.placedOn == nil,
                let next = core.registry.instanceForCall(of: call.service, excluding: Set(call.tried))
            {
                core.log(
                    "\(call.service).\(call.method): its instance \(why); sent again to another instance")
                send(&call, to: next, key: keys.next(), in: &core)
                continue
            }
            let note = call.idempotent ? "; no other instance is connected" : ""
            core.fail(
                call.client, call.clientRequestID, .unavailable,
                "the instance of '\(call.service)' answering \(call.method) \(why) before answering\(note)")
        }
    }

    // MARK: Starts

    /// A lazy service that has not started: START it and park `request`; returns true when parked.
    private mutating func park(
        _ request: ClientRequest, for name: String, from peer: [UInt8], id: [UInt8], in core: inout BrokerCore
    ) -> Bool {
        guard let entry = core.registry.entry(named: name), entry.registration.lazy, !core.isStarted(name)
        else {
            return false
        }
        if core.starts[name] == nil { core.log("starting lazy service \(name) on its first use") }
        start(name, in: &core)
        parked[name, default: []].append((peer, id, request))
        return true
    }

    /// Sends START to `name` unless it started or is starting.
    private mutating func start(_ name: String, in core: inout BrokerCore) {
        guard let entry = core.registry.entry(named: name), core.starts[name] == nil else { return }
        core.starts[name] = .starting
        let key = keys.next()
        starting[key] = name
        let id = core.correlator.open(
            .services, key: key, peer: entry.servingPeer,
            deadline: core.deadline(core.configuration.serviceStartTimeout))
        core.send(
            entry.servingPeer,
            .start(name: name, timeoutMilliseconds: core.configuration.serviceStartTimeout.wholeMilliseconds),
            id: id)
    }

    /// `name` started (or gave up) on the instance on `peer`: the requests that waited for it go on.
    private mutating func finishStart(_ name: String, on peer: [UInt8]?, in core: inout BrokerCore) {
        let wasStarted = core.isStarted(name)
        core.starts[name] = .started
        // One instance was started (by the boot or here): the other connected ones now are (one
        // whose connection closed gets START when it registers again).
        if !wasStarted, let entry = core.registry.entry(named: name) {
            let first = peer ?? entry.instances[0].peer
            for instance in entry.instances where instance.peer != first {
                if instance.connected {
                    startInstance(name, on: instance.peer, in: &core)
                } else {
                    startOwed[name, default: []].insert(instance.id)
                }
            }
        }
        for (peer, id, request) in parked.removeValue(forKey: name) ?? [] {
            handle(request, from: peer, id: id, in: &core)
        }
    }

    // MARK: Answers, expiries, announcements

    mutating func answered(_ wait: Correlator.Entry, with reply: ControlReply, in core: inout BrokerCore) {
        if let call = calls.removeValue(forKey: wait.key) {
            if let peer = wait.peer {
                core.registry.changeLoad(of: call.service, on: peer, by: -1)
                core.registry.countAnswer(of: call.service, on: peer)
            }
            if let placedOn = call.placedOn, let key = call.call.key {
                placements.count(call.service, key: key, instance: placedOn, by: -1)
            }
            core.stats.recordCall(
                service: call.service, method: call.method, nanoseconds: core.nanoseconds &- call.forwardedAt,
                success: reply.status.isSuccess, timedOut: false)
            Self.trace(call, status: reply.status, in: &core)
            var forwarded = reply
            forwarded.requestID = call.clientRequestID
            core.send(call.client, forwarded)
        } else if let name = starting.removeValue(forKey: wait.key) {
            if !reply.status.isSuccess { core.log("\(name) failed to start: \(reply.errorMessage)") }
            finishStart(name, on: wait.peer, in: &core)
        } else if let name = startingInstances.removeValue(forKey: wait.key), !reply.status.isSuccess {
            core.log("an instance of \(name) failed to start: \(reply.errorMessage)")
        }
    }

    /// While a TRACE lease is held, a finished call goes on the bus as `callDidFinish`.
    private static func trace(_ call: ForwardedCall, status: Status, in core: inout BrokerCore) {
        guard core.tracing else { return }
        core.publishRuntime(
            .callDidFinish,
            [
                "service": .string(call.service), "method": .string(call.method),
                "status": .int(Int64(status.rawValue)),
                "durationMs": .double(Double(core.nanoseconds &- call.forwardedAt) / 1e6),
            ])
    }

    mutating func expired(_ wait: Correlator.Entry, in core: inout BrokerCore) {
        if let call = moving.removeValue(forKey: wait.key) {
            heldExpired(call, in: &core)
        } else if wait.key == placingTimer {
            placingTimer = nil
            retryHeld(of: nil, in: &core)
        } else if let retiring = retiringInstances.removeValue(forKey: wait.key) {
            retired(retiring.service, instance: retiring.instance, in: &core)
        } else if let call = calls.removeValue(forKey: wait.key) {
            if let peer = wait.peer { core.registry.changeLoad(of: call.service, on: peer, by: -1) }
            if let placedOn = call.placedOn, let key = call.call.key {
                placements.count(call.service, key: key, instance: placedOn, by: -1)
            }
            let message =
                "\(call.call.address).\(call.method) did not answer within \(call.timeoutMilliseconds) ms"
            core.log("call timed out: \(message)")
            core.stats.recordCall(
                service: call.service, method: call.method, nanoseconds: core.nanoseconds &- call.forwardedAt,
                success: false, timedOut: true)
            Self.trace(call, status: .timeout, in: &core)
            core.fail(call.client, call.clientRequestID, .timeout, message)
        } else if let name = starting.removeValue(forKey: wait.key) {
            core.log(
                "\(name) did not finish starting within \(core.configuration.serviceStartTimeout.wholeMilliseconds) ms; going on"
            )
            finishStart(name, on: wait.peer, in: &core)
        } else if let name = startingInstances.removeValue(forKey: wait.key) {
            core.log("an instance of \(name) did not finish starting in time; going on")
        }
    }

    mutating func react(to announcement: Announcement, in core: inout BrokerCore) {
        switch announcement {
        case .registered(let registration, let renewed):
            if !registration.lazy && core.servicesStartAtOnce { start(registration.name, in: &core) }
            if renewed, startOwed[registration.name]?.remove(registration.instance) != nil,
                let peer = core.registry.entry(named: registration.name)?.instances.first(where: {
                    $0.id == registration.instance
                })?.peer
            {
                startInstance(registration.name, on: peer, in: &core)
            }
            if !registration.keyedMethods.isEmpty { retryHeld(of: registration.name, in: &core) }
        case .holding(let registration, let peer, let keys):
            adopt(registration, keys: keys, from: peer, in: &core)
        case .started(let service, let peer): finishStart(service, on: peer, in: &core)
        case .bootSettled:
            let waiting = core.registry.entries.values.filter {
                !$0.registration.lazy && core.starts[$0.registration.name] == nil
            }
            for entry in waiting.sorted(by: { $0.order < $1.order }) {
                start(entry.registration.name, in: &core)
            }
        case .gone(let registration, let reason):
            startOwed[registration.name] = nil
            serviceGone(registration.name, reason: reason.rawValue, in: &core)
            if !registration.keyedMethods.isEmpty {
                instanceDeparted(
                    registration.name, instance: registration.instance, reason: reason,
                    window: registration.heartbeat.expiryNanoseconds, in: &core)
            }
        case .instanceJoined(let registration, let peer, _):
            if core.isStarted(registration.name) { startInstance(registration.name, on: peer, in: &core) }
            if !registration.keyedMethods.isEmpty { retryHeld(of: registration.name, in: &core) }
        case .instanceLeft(let registration, let peer, let reason, _):
            startOwed[registration.name]?.remove(registration.instance)
            instanceLost(peer, names: [registration.name], why: "went away (\(reason.rawValue))", in: &core)
            if !registration.keyedMethods.isEmpty {
                instanceDeparted(
                    registration.name, instance: registration.instance, reason: reason,
                    window: registration.heartbeat.expiryNanoseconds, in: &core)
            }
        case .cutOff(let peer, let names):
            instanceLost(peer, names: Set(names), why: "lost its connection", in: &core)
        default: break
        }
    }

    /// Sends START to the instance of `name` on `peer` (one after the first, of a started service).
    private mutating func startInstance(_ name: String, on peer: [UInt8], in core: inout BrokerCore) {
        let key = keys.next()
        startingInstances[key] = name
        let id = core.correlator.open(
            .services, key: key, peer: peer, deadline: core.deadline(core.configuration.serviceStartTimeout))
        core.send(
            peer,
            .start(name: name, timeoutMilliseconds: core.configuration.serviceStartTimeout.wholeMilliseconds),
            id: id)
    }

    /// A service left: its calls fail, its start is forgotten, what waited for it fails.
    private mutating func serviceGone(_ name: String, reason: String, in core: inout BrokerCore) {
        for (key, call) in calls.sorted(by: { $0.key < $1.key }) where call.service == name {
            calls[key] = nil
            core.correlator.close(owner: .services, key: key)
            if let placedOn = call.placedOn, let actor = call.call.key {
                placements.count(name, key: actor, instance: placedOn, by: -1)
                placements.markBusy(name, key: actor, instance: placedOn, until: call.deadline.nanoseconds)
            }
            core.fail(
                call.client, call.clientRequestID, .unavailable,
                "service '\(name)' went away (\(reason)) before answering \(call.method)")
        }
        for (key, service) in starting where service == name {
            starting[key] = nil
            core.correlator.close(owner: .services, key: key)
        }
        for (key, service) in startingInstances where service == name {
            startingInstances[key] = nil
            core.correlator.close(owner: .services, key: key)
        }
        core.starts[name] = nil
        for (key, call) in moving.sorted(by: { $0.key < $1.key }) where call.service == name {
            moving[key] = nil
            core.correlator.close(owner: .services, key: key)
            core.fail(
                call.client, call.clientRequestID, .unavailable,
                "service '\(name)' went away (\(reason)) before \(call.call.address) could be placed")
        }
        for (peer, id, _) in parked.removeValue(forKey: name) ?? [] {
            core.fail(peer, id, .unavailable, "service '\(name)' went away before it finished starting")
        }
    }
}
