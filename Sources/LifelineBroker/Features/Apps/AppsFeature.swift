import LifelineProtocol

/// APPS: the Context's micro-app stack. Reads (list, current, find) are answered at once; changes
/// (start, exit, exitAll, dismiss, popToRoot, setRoot, action) queue and run one at a time, delivering
/// their callbacks to the hosts in order, each answered (or timed out) before the next. A host that
/// dies takes its sessions with it; one that registers gets its restored sessions back.
struct AppsFeature: BrokerFeature {
    var stack: SessionStack
    var queue: [AppOperation] = []
    var transition: AppTransition?
    var keys = KeyCounter()
    /// The ids of the changes done (kept with the stack, so a retry after a restart is done once).
    var done: [String] = []
    static let rememberedOperations = 1024
    /// Callbacks for sessions whose host is away (detached): delivered, in order, after the host's
    /// `restore` callbacks when it registers again. Kept in `sessions.json`.
    var deferred: [AppCallback] = []
    static let rememberedCallbacks = 1024

    init(stack: SessionStack, saved: JSONValue? = nil) {
        self.stack = stack
        done = (saved?["operations"]?.arrayValue ?? []).compactMap(\.stringValue)
        // The change in progress when the last broker stopped goes on where it was: every session is
        // detached now, so its callbacks wait for their hosts. An action is not sent again: its
        // caller was told it failed.
        let waiting = (saved?["deferred"]?.arrayValue ?? []) + (saved?["pending"]?.arrayValue ?? [])
        deferred = waiting.compactMap(AppCallback.init(json:)).filter { $0.name != .action }
    }

    /// What `sessions.json` holds: the stack, the ids of the changes done, the callbacks of the change
    /// in progress not answered yet, and those waiting for their hosts.
    var document: JSONValue {
        guard case .object(var members) = stack.json else { return stack.json }
        members["operations"] = .array(done.map { .string($0) })
        members["deferred"] = .array(deferred.map(\.json))
        if let transition, transition.committed {
            let first = transition.awaiting == nil ? transition.next : transition.next - 1
            members["pending"] = .array(
                transition.callbacks[min(first, transition.callbacks.count)...].filter { $0.name != .action }
                    .map(\.json))
        }
        return .object(members)
    }

    /// Remembers that the change `operationID` was done.
    mutating func markDone(_ operationID: String) {
        guard !done.contains(operationID) else { return }
        done.append(operationID)
        if done.count > Self.rememberedOperations { done.removeFirst(done.count - Self.rememberedOperations) }
    }

    /// True when `operationID` names a change that is queued or under way.
    func isPending(_ operationID: String) -> Bool {
        let matches: (AppOperation) -> Bool = { operation in
            if case .request(_, _, _, let id) = operation { return id == operationID }
            return false
        }
        return queue.contains(where: matches) || transition.map { matches($0.operation) } == true
    }

    mutating func handle(_ request: ClientRequest, from peer: [UInt8], id: [UInt8], in core: inout BrokerCore)
    {
        guard case .apps(let apps, let operationID) = request else { return }
        if let operationID, !apps.isQuery {
            if done.contains(operationID) {
                core.log(
                    "APPS '\(operationID)' repeated by \(core.peerName(peer)): it was done already"
                )
                core.reply(peer, id, AppsReplies.Change(stack: stack.sessions, repeated: true))
                return
            }
            if isPending(operationID) {
                core.fail(peer, id, .conflict, "APPS '\(operationID)' is under way already")
                return
            }
            // Asked for in a callback that waits for its host to register again: the host's
            // connection reached this (restarted) broker before it noticed. It is told to register
            // again, and sends the change again once it has (the change is not answered now).
            if !core.registry.isKnown(peer: peer), let dot = operationID.lastIndex(of: "."),
                deferred.contains(where: { $0.id == String(operationID[..<dot]) })
            {
                core.log(
                    "APPS '\(operationID)' from \(core.peerName(peer)) waits for its host to register again")
                core.send(peer, .disconnect(reason: "unknown peer: register again"))
                return
            }
        }
        switch apps {
        case .list:
            core.reply(
                peer, id, AppsReplies.List(stack: stack.sessions, launcher: core.configuration.launcherApp))
        case .current: core.reply(peer, id, AppsReplies.Current(session: stack.top))
        case .find(let app, let all):
            if all {
                core.reply(peer, id, AppsReplies.Found(sessions: stack.all(app)))
            } else if let record = stack.newest(app) {
                core.reply(peer, id, record)
            } else {
                core.fail(peer, id, .notFound, "no session of the app '\(app)' is on the stack")
            }
        default:
            queue.append(.request(apps, peer: peer, id: id, operationID: operationID))
            pump(in: &core)
        }
    }

    /// Starts queued operations while none is in progress.
    mutating func pump(in core: inout BrokerCore) {
        while transition == nil, !queue.isEmpty {
            let operation = queue.removeFirst()
            begin(operation, in: &core)
            if transition != nil { advance(in: &core) }
        }
    }

    /// The callbacks that waited for `host` (for its `instance`, when it runs several: those of the
    /// sessions that live there now), taken off the waiting list.
    private mutating func takeDeferred(host: String, instance: String?, in core: inout BrokerCore)
        -> [AppCallback]
    {
        func waits(_ callback: AppCallback) -> Bool {
            callback.host == host
                && (stack.session(callback.session)?.instance ?? callback.instance) == instance
        }
        var waiting = deferred.filter(waits)
        guard !waiting.isEmpty else { return [] }
        deferred.removeAll(where: waits)
        for index in waiting.indices { waiting[index].instance = instance }
        core.log("delivering \(waiting.count) callback(s) that waited for \(host)")
        return waiting
    }

    /// The connection a session's callbacks go to: its instance's, when its host runs several
    /// (nil once that instance's connection closed), else its host's.
    static func peer(host: String, instance: String?, in core: BrokerCore) -> [UInt8]? {
        guard let entry = core.registry.entry(named: host) else { return nil }
        guard let instance else { return entry.peer }
        return entry.instances.first { $0.id == instance && $0.connected }?.peer
    }

    /// The instance of a host of several that a new session goes to: the connected one hosting the
    /// fewest sessions (the oldest of those tied); nil for a host of one process.
    func placement(on entry: ServiceRegistry.Entry) -> String? {
        guard entry.registration.replicable else { return nil }
        let hosted = Dictionary(grouping: stack.sessions.compactMap(\.instance), by: { $0 }).mapValues(
            \.count)
        return entry.instances.filter(\.connected).min {
            hosted[$0.id, default: 0] < hosted[$1.id, default: 0]
        }?.id
    }

    /// The live hosts that offer `app`, in registration order.
    static func hosts(offering app: String, in core: BrokerCore) -> [ServiceRegistry.Entry] {
        core.registry.entries.values.filter { $0.registration.apps.contains(app) }.sorted {
            $0.order < $1.order
        }
    }

    private mutating func begin(_ operation: AppOperation, in core: inout BrokerCore) {
        var transition = AppTransition(operation: operation, stage: .delivering)
        switch operation {
        case .crash(let host, let instance):
            deferred.removeAll { $0.host == host && (instance == nil || $0.instance == instance) }
            transition.outcome = stack.removeHost(host, instance: instance, now: core.wallMilliseconds)
            transition.callbacks = transition.outcome.callbacks
            for record in transition.outcome.crashed {
                let process = record.instance.map { "\(record.host) (instance \($0))" } ?? record.host
                core.log("session \(record.id) (\(record.app)) crashed with its host \(process)")
                var payload: [String: JSONValue] = [
                    "session": .string(record.id), "app": .string(record.app), "host": .string(record.host),
                ]
                if let instance = record.instance { payload["instance"] = .string(instance) }
                core.publishRuntime(.appDidCrash, .object(payload))
            }
            core.persist("sessions.json", document)
        case .detach(let host):
            let kept = stack.detach(host: host, now: core.wallMilliseconds)
            core.log(
                "kept \(kept) session(s) of \(host) on the stack: it stopped cleanly; they come back when it registers"
            )
            core.persist("sessions.json", document)
            return
        case .attach(let host, let instance, let adopting):
            let live = Set(core.registry.entry(named: host)?.instances.map(\.id) ?? [])
            transition.callbacks = stack.attach(
                host: host, instance: instance,
                takes: { record in
                    instance == nil || record.instance == instance || record.instance == nil
                        || (adopting && !live.contains(record.instance ?? ""))
                }, now: core.wallMilliseconds)
            if !transition.callbacks.isEmpty {
                core.log(
                    "restored \(transition.callbacks.count) session(s) of \(host)\(instance.map { " on instance \($0)" } ?? "")"
                )
            }
            transition.callbacks += takeDeferred(host: host, instance: instance, in: &core)
            if transition.callbacks.isEmpty { return }
        case .move(let host, let from, let to):
            transition.callbacks = stack.move(host: host, from: from, to: to, now: core.wallMilliseconds)
            if !transition.callbacks.isEmpty {
                core.log(
                    "moved \(transition.callbacks.count) session(s) of \(host) from instance \(from), which stopped cleanly, to \(to)"
                )
            }
            transition.callbacks += takeDeferred(host: host, instance: to, in: &core)
            if transition.callbacks.isEmpty { return }
            core.persist("sessions.json", document)
        case .launch:
            guard let launcher = core.configuration.launcherApp, stack.newest(launcher) == nil,
                !Self.hosts(offering: launcher, in: core).isEmpty
            else { return }
            transition.start = AppStart(app: launcher, mode: .pushNoAnimation, clearTop: true)
            transition.stage = .intercepting
            core.log("starting the Launcher app '\(launcher)'")
        case .request(let request, let peer, _, let operationID):
            // Checked again now: what it targets may have changed while it was queued.
            if let refusal = refusal(of: request, operationID: operationID, peer: peer, in: core) {
                transition.failure = (.forbidden, refusal)
                finish(transition, in: &core)
                return
            }
            guard plan(request, into: &transition, in: &core) else {
                finish(transition, in: &core)
                return
            }
        }
        self.transition = transition
    }

    /// Checks an APPS change against the stack; plans it when no interceptor or veto comes first.
    /// False when it failed already (`transition.failure`).
    private mutating func plan(
        _ request: AppsRequest, into transition: inout AppTransition, in core: inout BrokerCore
    )
        -> Bool
    {
        func fail(_ status: Status, _ message: String) -> Bool {
            transition.failure = (status, message)
            return false
        }
        func session(_ target: SessionTarget?) -> SessionRecord? { stack.session(for: target) }
        func missing(_ target: SessionTarget?) -> String {
            let named: String
            switch target {
            case .top: named = "no session on the stack (it is empty)"
            case .session(let id): named = "no session '\(id)' on the stack"
            case .app(let app): named = "no session of the app '\(app)' on the stack"
            case nil: named = "no session named"  // refused as a 400 when read
            }
            let sessions = stack.sessions.map { "\($0.id) (\($0.app))" }.joined(separator: ", ")
            return named + (stack.sessions.isEmpty ? "" : "; on it: \(sessions)")
        }
        switch request {
        case .start(let start):
            if let parent = start.parent, stack.session(parent) == nil {
                return fail(.notFound, "no session '\(parent)' to be the parent")
            }
            transition.start = start
            transition.stage = .intercepting
            transition.interceptors = core.registry.entries.values.filter {
                $0.registration.interceptorPriority != nil
            }
            .sorted {
                ($0.registration.interceptorPriority ?? 0, -Int($0.order)) > (
                    $1.registration.interceptorPriority ?? 0, -Int($1.order)
                )
            }
            .map(\.registration.name)
            return true
        case .exit(let exit):
            guard let record = session(exit.target) else {
                return fail(.notFound, missing(exit.target))
            }
            if !exit.force, let problem = stack.exitProblem(record.id) { return fail(.conflict, problem) }
            transition.exit = (record.id, exit.result, exit.animated)
            if exit.force || record.state == .detached
                || Self.peer(host: record.host, instance: record.instance, in: core) == nil
            {
                planExit(&transition, in: core)
            } else {
                transition.stage = .vetoing
            }
            return true
        case .exitAll:
            transition.outcome = stack.exitAll(now: core.wallMilliseconds)
        case .dismiss:
            guard let outcome = stack.dismiss(now: core.wallMilliseconds) else {
                return fail(.notFound, "no presented session to dismiss")
            }
            transition.outcome = outcome
        case .popToRoot:
            transition.outcome = stack.popToRoot(now: core.wallMilliseconds)
        case .action(let target, let action, let body):
            guard let record = session(target) else { return fail(.notFound, missing(target)) }
            transition.callbacks = [AppCallback(record, .action, ["action": .string(action), "body": body])]
            return true
        case .list, .current, .find:
            return fail(.badRequest, "APPS \(request.operation) is a query")
        }
        transition.callbacks = transition.outcome.callbacks
        return true
    }

    mutating func planExit(_ transition: inout AppTransition, in core: BrokerCore) {
        guard let exit = transition.exit else { return }
        let forced = transition.stage != .vetoing
        transition.outcome = stack.exit(
            exit.session, result: exit.result, animated: exit.animated, forced: forced,
            now: core.wallMilliseconds)
        transition.callbacks = transition.outcome.callbacks
        transition.stage = .delivering
    }

    mutating func planStart(_ transition: inout AppTransition, in core: BrokerCore) {
        guard let start = transition.start else { return }
        guard let host = Self.hosts(offering: start.app, in: core).first else {
            let offered = Set(core.registry.entries.values.flatMap(\.registration.apps)).sorted()
            transition.failure = (
                .notFound,
                "no live host offers the app '\(start.app)'; offered apps: \(offered.isEmpty ? "none" : offered.joined(separator: ", "))"
            )
            return
        }
        let at = core.wallMilliseconds
        let instance = placement(on: host)
        transition.outcome =
            start.replacesRoot
            ? stack.setRoot(
                app: start.app, host: host.registration.name, instance: instance, params: start.params,
                mode: start.mode, parent: start.parent, now: at)
            : stack.start(
                app: start.app, host: host.registration.name, instance: instance, params: start.params,
                mode: start.mode, clearTop: start.clearTop, parent: start.parent, now: at)
        transition.callbacks = transition.outcome.callbacks
        transition.stage = .delivering
    }

    mutating func finish(_ transition: AppTransition, in core: inout BrokerCore) {
        let outcome = transition.outcome
        if case .launch = transition.operation { core.announce(.launcherFinished(.done, reason: nil)) }
        for (record, result, forced) in outcome.exited {
            core.publishRuntime(
                .appDidExit,
                [
                    "session": .string(record.id), "app": .string(record.app), "forced": .bool(forced),
                    "result": result ?? .null,
                ])
        }
        if let started = outcome.started {
            var payload: [String: JSONValue] = [
                "session": .string(started.id), "app": .string(started.app), "host": .string(started.host),
                "mode": .string(started.mode.rawValue), "parent": started.parent.map { .string($0) } ?? .null,
            ]
            if let instance = started.instance { payload["instance"] = .string(instance) }
            core.publishRuntime(.appDidStart, .object(payload))
        }
        if case .request(_, _, _, let operationID?) = transition.operation, transition.failure == nil {
            markDone(operationID)
        }
        if !transition.callbacks.isEmpty || transition.failure == nil {
            core.persist("sessions.json", document)
        }
        guard case .request(_, let peer, let id, _) = transition.operation else { return }
        if let failure = transition.failure {
            core.fail(peer, id, failure.status, failure.message)
            return
        }
        // The started session's host left while the start went on: the crash queued next takes the
        // session off the stack, a clean stop leaves it detached — either way it did not start.
        if let started = outcome.started, let departure = departureQueued(for: started) {
            core.fail(
                peer, id, .unavailable,
                departure == .crash
                    ? "the host of \(started.id) (\(started.app)), \(started.host), went away during the start: the session crashed with it"
                    : "the host of \(started.id) (\(started.app)), \(started.host), stopped during the start: the session waits for it, detached"
            )
            return
        }
        if var actionReply = transition.actionReply {
            actionReply.requestID = id
            core.send(peer, actionReply)
            return
        }
        var reply = AppsReplies.Change(stack: stack.sessions)
        if let started = outcome.started { reply.session = stack.session(started.id) ?? started }
        if let resumed = transition.start.flatMap({ stack.newest($0.app) }), outcome.started == nil {
            reply.session = resumed
        }
        if !outcome.exited.isEmpty { reply.exited = outcome.exited.map(\.record) }
        core.reply(peer, id, reply)
    }
}
