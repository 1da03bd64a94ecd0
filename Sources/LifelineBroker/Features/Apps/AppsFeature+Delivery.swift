import LifelineProtocol

/// Delivering an operation: interceptors, the veto, the callbacks, each answered or timed out before
/// the next; and what hosts coming and going do to the stack.
extension AppsFeature {
    /// Sends the next interceptor request, veto or callback, or finishes.
    mutating func advance(in core: inout BrokerCore) {
        // Each request says how long the broker waits for it: a host that stops waits no longer.
        let limit = core.configuration.appCallbackTimeout.wholeMilliseconds
        while var transition = self.transition, transition.awaiting == nil {
            if transition.failure != nil {
                self.transition = nil
                finish(transition, in: &core)
                pump(in: &core)
                return
            }
            switch transition.stage {
            case .intercepting:
                if transition.interceptors.isEmpty {
                    planStart(&transition, in: core)
                } else {
                    let name = transition.interceptors.removeFirst()
                    if let entry = core.registry.entry(named: name), let start = transition.start {
                        transition.awaiting = expect(
                            name, "INTERCEPT of \(start.app)", peer: entry.peer, in: &core)
                        core.send(
                            entry.peer, .intercept(start, timeoutMilliseconds: limit),
                            id: transition.awaiting?.id ?? [])
                    }
                }
            case .vetoing:
                if let exit = transition.exit, let record = stack.session(exit.session),
                    let peer = Self.peer(host: record.host, instance: record.instance, in: core)
                {
                    transition.awaiting = expect(
                        record.host, "\(record.app).shouldTerminate", peer: peer, in: &core)
                    core.send(
                        peer, AppCallback(record, .shouldTerminate).request(timeoutMilliseconds: limit),
                        id: transition.awaiting?.id ?? []
                    )
                } else {
                    planExit(&transition, in: core)
                }
            case .delivering:
                guard transition.next < transition.callbacks.count else {
                    self.transition = nil
                    finish(transition, in: &core)
                    pump(in: &core)
                    return
                }
                if !transition.committed { commit(&transition) }
                let callback = transition.callbacks[transition.next]
                let session = stack.session(callback.session)
                let detached = session?.state == .detached && callback.name != .restore
                if !detached,
                    let peer = Self.peer(
                        host: callback.host, instance: session?.instance ?? callback.instance, in: core)
                {
                    // Saved first: a broker killed from here on delivers this callback again, and the
                    // host (which knows its id) runs it once.
                    self.transition = transition
                    core.persist("sessions.json", document)
                    transition.next += 1
                    transition.awaiting = expect(
                        callback.host, "\(callback.app).\(callback.name.rawValue) (\(callback.session))",
                        peer: peer, in: &core)
                    transition.awaiting?.callback = callback
                    core.send(
                        peer, callback.request(timeoutMilliseconds: limit), id: transition.awaiting?.id ?? [])
                } else if callback.name == .action {
                    transition.next += 1
                    transition.failure = (
                        .unavailable, "the host of \(callback.session) (\(callback.app)) is not connected"
                    )
                } else {
                    transition.next += 1
                    if stack.sessions.contains(where: { $0.host == callback.host && $0.state == .detached }) {
                        wait(callback, in: &core)
                    }
                }
            }
            self.transition = transition
        }
    }

    /// Gives the callbacks their ids and remembers the change as done: from here on it is finished
    /// even across a broker restart.
    private mutating func commit(_ transition: inout AppTransition) {
        transition.committed = true
        for index in transition.callbacks.indices where transition.callbacks[index].id == nil {
            transition.callbacks[index].id = Self.newCallbackID()
        }
        // An action changes no stack: it is done when its host has answered.
        if case .request(let request, _, _, let operationID?) = transition.operation {
            if case .action = request {} else { markDone(operationID) }
        }
    }

    /// Keeps a callback for a host that is away until it registers again.
    private mutating func wait(_ callback: AppCallback, in core: inout BrokerCore) {
        deferred.append(callback)
        if deferred.count > Self.rememberedCallbacks {
            let dropped = deferred.removeFirst()
            core.log(
                "dropped \(dropped.app).\(dropped.name.rawValue) (\(dropped.session)): more than \(Self.rememberedCallbacks) callbacks wait for hosts that are away"
            )
        }
    }

    static func newCallbackID() -> String {
        let value = String(UInt64.random(in: .min ... .max), radix: 16)
        return String(repeating: "0", count: 16 - value.count) + value
    }

    private mutating func expect(_ service: String, _ what: String, peer: [UInt8], in core: inout BrokerCore)
        -> AppTransition.Awaiting
    {
        let id = core.correlator.open(
            .apps, key: keys.next(), peer: peer,
            deadline: core.deadline(core.configuration.appCallbackTimeout))
        return AppTransition.Awaiting(id: id, service: service, peer: peer, what: what)
    }

    /// A host or interceptor answered.
    mutating func answered(_ wait: Correlator.Entry, with reply: ControlReply, in core: inout BrokerCore) {
        guard var transition = self.transition, let awaiting = transition.awaiting, awaiting.id == wait.id
        else {
            return
        }
        transition.awaiting = nil
        let parsed = try? reply.json()
        let body = parsed ?? .null
        if reply.status.isSuccess && parsed == nil && !reply.body.isEmpty {
            core.log("\(awaiting.what) was answered with a body that is not JSON; it is read as {}")
        }
        switch transition.stage {
        case .intercepting:
            switch StartDecision(bytes: reply.body) {
            case .refuse(let reason):
                transition.failure = (
                    .forbidden,
                    "the start of '\(transition.start?.app ?? "?")' was refused by \(awaiting.service): \(reason)"
                )
            case .change(let app, let params, let mode):
                if let app { transition.start?.app = app }
                if let params { transition.start?.params = params }
                if let mode { transition.start?.mode = mode }
                core.log("\(awaiting.service) changed a start request to '\(transition.start?.app ?? "?")'")
            case .allow: break
            }
        case .vetoing:
            if !reply.status.isSuccess || body["allow"]?.boolValue == nil {
                // Only an answer of {"allow": false} refuses; anything else lets the exit go on.
                core.log(
                    "\(awaiting.what) answered \(reply.status.rawValue) without a boolean 'allow': taken as allowed"
                )
            }
            if reply.status.isSuccess && body["allow"]?.boolValue == false, let exit = transition.exit {
                let record = stack.session(exit.session)
                transition.failure = (
                    .conflict,
                    "\(exit.session) (\(record?.app ?? "?")) refused to terminate: its shouldTerminate answered NO"
                )
            } else {
                planExit(&transition, in: core)
            }
        case .delivering:
            let callback = transition.callbacks[transition.next - 1]
            if !reply.status.isSuccess && callback.name != .action {
                core.log("\(awaiting.what) failed: \(reply.errorMessage)")
            }
            if callback.name == .didCreate, reply.status.isSuccess {
                stack.setRoot(body["root"] ?? .null, of: callback.session)
            }
            if callback.name == .action { transition.actionReply = reply }
        }
        self.transition = transition
        advance(in: &core)
    }

    /// Callbacks, interceptors and vetoes that were not answered in time: the broker goes on.
    mutating func expired(_ wait: Correlator.Entry, in core: inout BrokerCore) {
        guard var transition = self.transition, let awaiting = transition.awaiting, awaiting.id == wait.id
        else {
            return
        }
        let limit = core.configuration.appCallbackTimeout.wholeMilliseconds
        core.log("\(awaiting.what) was not answered within \(limit) ms; going on")
        transition.awaiting = nil
        if transition.stage == .vetoing {
            // The question unanswered counts as allowed: the exit goes on, its callbacks from the first.
            planExit(&transition, in: core)
        } else if transition.stage == .delivering, transition.next > 0,
            transition.callbacks[transition.next - 1].name == .action
        {
            transition.failure = (.timeout, "\(awaiting.what) was not answered within \(limit) ms")
        }
        self.transition = transition
        advance(in: &core)
    }

    mutating func react(to announcement: Announcement, in core: inout BrokerCore) {
        switch announcement {
        case .registered(let registration, _): hostRegistered(registration, in: &core)
        case .instanceJoined(let registration, _, _): hostRegistered(registration, in: &core)
        case .gone(let registration, let reason): hostStopped(registration, reason, in: &core)
        case .instanceLeft(let registration, let peer, let reason, _):
            instanceStopped(registration, peer: peer, reason, in: &core)
        case .launcherRequested: launcherRequested(in: &core)
        default: break
        }
    }

    /// The boot's last phase asks for the Launcher.
    private mutating func launcherRequested(in core: inout BrokerCore) {
        guard let launcher = core.configuration.launcherApp, !Self.hosts(offering: launcher, in: core).isEmpty
        else {
            core.announce(
                .launcherFinished(
                    .failed,
                    reason: "no live host offers the Launcher '\(core.configuration.launcherApp ?? "?")'"))
            return
        }
        if stack.newest(launcher) != nil {
            core.announce(.launcherFinished(.done, reason: "the Launcher is already on the stack"))
            return
        }
        queue.append(.launch)
        pump(in: &core)
    }

    /// A host left: a callback it owed counts as answered. After a clean stop its sessions stay on
    /// the stack, detached, until it registers again; after a crash they leave it (next in line).
    private mutating func hostStopped(
        _ registration: ServiceRegistration, _ reason: Departure, in core: inout BrokerCore
    ) {
        if stack.sessions.contains(where: { $0.host == registration.name && $0.state != .detached }) {
            let operation: AppOperation =
                reason == .unregistered ? .detach(host: registration.name) : .crash(host: registration.name)
            queue.insert(operation, at: 0)
        }
        stopWaiting(
            where: { $0.service == registration.name }, registration.name, cleanly: reason == .unregistered,
            in: &core)
    }

    /// One instance of a host of several left while others stay: after a clean stop its sessions
    /// move to another connected instance (or wait, detached, for the next to register); after a
    /// crash they leave the stack. A callback it owed counts as answered.
    private mutating func instanceStopped(
        _ registration: ServiceRegistration, peer: [UInt8], _ reason: Departure, in core: inout BrokerCore
    ) {
        guard !registration.apps.isEmpty else { return }
        let host = registration.name
        let instance = registration.instance
        if stack.sessions.contains(where: {
            $0.host == host && $0.instance == instance && $0.state != .detached
        }) {
            let heir = core.registry.entry(named: host).flatMap { entry in
                entry.instances.first { $0.connected && $0.id != instance }?.id
            }
            if reason == .unregistered, let heir {
                queue.insert(.move(host: host, from: instance, to: heir), at: 0)
            } else if reason == .unregistered {
                // No instance to take them now: detached, they go to the next that registers.
                _ = stack.detach(host: host, instance: instance, now: core.wallMilliseconds)
                core.persist("sessions.json", document)
            } else {
                queue.insert(.crash(host: host, instance: instance), at: 0)
            }
        }
        stopWaiting(
            where: { $0.peer == peer }, "instance \(instance) of \(host)", cleanly: reason == .unregistered,
            in: &core)
    }

    /// How `session`'s host (or its instance) left, when its crash or its clean stop waits in the
    /// queue.
    func departureQueued(for session: SessionRecord) -> QueuedDeparture? {
        for operation in queue {
            switch operation {
            case .crash(let host, let instance)
            where host == session.host && (instance == nil || instance == session.instance):
                return .crash
            case .detach(let host) where host == session.host: return .cleanStop
            default: continue
            }
        }
        return nil
    }

    enum QueuedDeparture { case crash, cleanStop }

    /// When the change in progress waits on an answer from `who`, which went away, that answer
    /// counts as given and the change goes on; otherwise what is queued runs.
    private mutating func stopWaiting(
        where gone: (AppTransition.Awaiting) -> Bool, _ who: String, cleanly: Bool, in core: inout BrokerCore
    ) {
        guard var transition = self.transition, let awaiting = transition.awaiting, gone(awaiting) else {
            pump(in: &core)
            return
        }
        core.log("\(awaiting.what) lost: \(who) went away")
        core.correlator.close(awaiting.id)
        transition.awaiting = nil
        if transition.stage == .vetoing, cleanly, let exit = transition.exit {
            // A host that stopped cleanly keeps its sessions, detached: the exit it did not answer
            // does not happen.
            transition.failure = (
                .unavailable,
                "\(exit.session) was not exited: \(who) stopped before answering shouldTerminate; the session waits for it, detached"
            )
        } else if transition.stage == .vetoing {
            planExit(&transition, in: core)
        }
        self.transition = transition
        advance(in: &core)
    }

    /// A host (or an instance of one) registered: its restored sessions come back, and the Launcher
    /// starts if it offers it. An instance takes the sessions it hosted; once instances have had
    /// their heartbeat window to register again after a broker restart, also those of instances
    /// that did not come back.
    private mutating func hostRegistered(_ registration: ServiceRegistration, in core: inout BrokerCore) {
        guard !registration.apps.isEmpty else { return }
        if stack.sessions.contains(where: { $0.host == registration.name && $0.state == .detached }) {
            if registration.replicable {
                let settled =
                    core.now.nanoseconds &- core.startedAt.nanoseconds
                    > registration.heartbeat.expiryNanoseconds
                queue.append(
                    .attach(host: registration.name, instance: registration.instance, adopting: settled))
            } else {
                queue.append(.attach(host: registration.name))
            }
        }
        if let launcher = core.configuration.launcherApp, registration.apps.contains(launcher),
            core.servicesStartAtOnce
        {
            queue.append(.launch)
        }
        pump(in: &core)
    }
}
