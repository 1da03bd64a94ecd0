import LifelineProtocol

/// The Context's stack of micro-app sessions (mPaaS's application stack), bottom to top, as a pure
/// state machine: each operation changes the stack at once and returns the lifecycle callbacks to
/// deliver, in this exact order:
///
/// - start B over A: B.didCreate, A.willPause, B.willStartLaunching(params), B.didFinishLaunching;
/// - start with clearTop (and any start of the Launcher) when a session of the app exists: every
///   session above it willTerminate (top first), their parents' childDidFinish, then
///   willResume(params) and didResume(params) on it;
/// - exit S: S.willTerminate, S's parent childDidFinish(S, result), and when S was on top,
///   willResume and didResume on the new top;
/// - a host dies: its sessions leave; surviving parents get childDidFinish(…, {"crashed": true}); the
///   new top resumes.
struct SessionStack {
    /// What an operation did.
    struct Outcome {
        var started: SessionRecord?
        var exited: [(record: SessionRecord, result: JSONValue?, forced: Bool)] = []
        var crashed: [SessionRecord] = []
        var callbacks: [AppCallback] = []
    }

    private(set) var sessions: [SessionRecord] = []
    private(set) var counter: UInt64 = 0
    /// The Launcher app: starting it always clears the stack above it.
    var launcher: String?

    init(launcher: String? = nil) { self.launcher = launcher }

    var top: SessionRecord? { sessions.last }
    func session(_ id: String) -> SessionRecord? { sessions.first { $0.id == id } }
    /// The newest session of `app` (findApplicationByName).
    func newest(_ app: String) -> SessionRecord? { sessions.last { $0.app == app } }
    /// The session `target` names: the top one, one by id, or the newest of an app.
    func session(for target: SessionTarget?) -> SessionRecord? {
        switch target {
        case .top: top
        case .session(let id): session(id)
        case .app(let app): newest(app)
        case nil: nil
        }
    }
    /// Every session of `app`, oldest first (findApplicationsByName).
    func all(_ app: String) -> [SessionRecord] { sessions.filter { $0.app == app } }

    // MARK: Operations

    mutating func start(
        app: String, host: String, instance: String? = nil, params: JSONValue, mode: LaunchMode,
        clearTop: Bool, parent: String?, now: Int64
    ) -> Outcome {
        if clearTop || app == launcher, let existing = newest(app) {
            var outcome = popAbove(existing.id, animated: mode.isAnimated, now: now)
            let index = sessions.firstIndex { $0.id == existing.id }!
            sessions[index].state = .running
            sessions[index].updatedAt = now
            outcome.callbacks += [
                AppCallback(sessions[index], .willResume, ["options": params]),
                AppCallback(sessions[index], .didResume, ["options": params]),
            ]
            return outcome
        }
        counter += 1
        let record = SessionRecord(
            id: "s\(counter)", app: app, params: params, mode: mode, host: host, state: .running,
            parent: parent, createdAt: now,
            updatedAt: now, instance: instance)
        var outcome = Outcome(started: record)
        outcome.callbacks.append(AppCallback(record, .didCreate, ["record": record.json]))
        if let previous = sessions.indices.last {
            sessions[previous].state = sessions[previous].state == .detached ? .detached : .paused
            sessions[previous].updatedAt = now
            outcome.callbacks.append(AppCallback(sessions[previous], .willPause))
        }
        outcome.callbacks += [
            AppCallback(record, .willStartLaunching, ["options": params]),
            AppCallback(record, .didFinishLaunching),
        ]
        sessions.append(record)
        return outcome
    }

    /// Why `id` may not exit normally, or nil.
    func exitProblem(_ id: String) -> String? {
        guard let record = session(id) else { return "no session '\(id)'" }
        guard record.id == top?.id else {
            return
                "only the top session may exit normally; \(record.id) (\(record.app)) is under \(top?.id ?? "?") (\(top?.app ?? "?")); exit it with force"
        }
        return nil
    }

    mutating func exit(_ id: String, result: JSONValue?, animated: Bool, forced: Bool, now: Int64) -> Outcome
    {
        guard let index = sessions.firstIndex(where: { $0.id == id }) else { return Outcome() }
        let wasTop = index == sessions.count - 1
        let record = sessions.remove(at: index)
        var outcome = Outcome(exited: [(record, result, forced)])
        outcome.callbacks.append(AppCallback(record, .willTerminate, ["animated": .bool(animated)]))
        notifyParent(of: record, result: result ?? .null, into: &outcome)
        if wasTop { resumeTop(now: now, into: &outcome) }
        return outcome
    }

    mutating func exitAll(now: Int64) -> Outcome {
        var outcome = Outcome()
        while let record = sessions.popLast() {
            outcome.exited.append((record, nil, true))
            outcome.callbacks.append(AppCallback(record, .willTerminate, ["animated": false]))
        }
        return outcome
    }

    /// Closes the topmost presented session and everything above it, as a clearTop closes what is
    /// above its session (every willTerminate, top first, then childDidFinish for the parents that
    /// stay), and the new top resumes; nil when nothing is presented.
    mutating func dismiss(now: Int64) -> Outcome? {
        guard let index = sessions.lastIndex(where: { $0.mode.isPresentation }) else { return nil }
        var outcome = pop(downTo: index, animated: sessions[index].mode.isAnimated)
        resumeTop(now: now, into: &outcome)
        return outcome
    }

    /// Exits every session above the bottom one, which resumes.
    mutating func popToRoot(now: Int64) -> Outcome {
        guard let root = sessions.first else { return Outcome() }
        var outcome = popAbove(root.id, animated: true, now: now)
        if !outcome.exited.isEmpty { resumeTop(now: now, into: &outcome) }
        return outcome
    }

    /// Everything above the Launcher (or everything, without one) exits, then `app` starts.
    mutating func setRoot(
        app: String, host: String, instance: String? = nil, params: JSONValue, mode: LaunchMode,
        parent: String?, now: Int64
    ) -> Outcome {
        var outcome: Outcome
        if let launcher, let base = newest(launcher) {
            outcome = popAbove(base.id, animated: false, now: now)
        } else {
            outcome = exitAll(now: now)
        }
        let started = start(
            app: app, host: host, instance: instance, params: params, mode: mode, clearTop: false,
            parent: parent,
            now: now)
        outcome.started = started.started
        outcome.callbacks += started.callbacks
        return outcome
    }

    /// The host died (or its `instance`): its sessions leave the stack; the survivors hear about it.
    mutating func removeHost(_ host: String, instance: String? = nil, now: Int64) -> Outcome {
        let crashed = sessions.filter {
            $0.host == host && $0.state != .detached && (instance == nil || $0.instance == instance)
        }
        guard !crashed.isEmpty else { return Outcome() }
        let topCrashed = crashed.contains { $0.id == top?.id }
        sessions.removeAll { record in crashed.contains { $0.id == record.id } }
        var outcome = Outcome(crashed: crashed)
        for record in crashed { notifyParent(of: record, result: ["crashed": true], into: &outcome) }
        if topCrashed { resumeTop(now: now, into: &outcome) }
        return outcome
    }

    /// `host` (or its `instance`) stopped cleanly: its sessions wait for it, detached; returns how many.
    mutating func detach(host: String, instance: String? = nil, now: Int64) -> Int {
        var count = 0
        for index in sessions.indices
        where sessions[index].host == host && sessions[index].state != .detached
            && (instance == nil || sessions[index].instance == instance)
        {
            sessions[index].state = .detached
            sessions[index].updatedAt = now
            count += 1
        }
        return count
    }

    /// After a broker restart every session waits for its host.
    mutating func detachAll() {
        for index in sessions.indices { sessions[index].state = .detached }
    }

    /// `host` registered: its detached sessions come back (restore callbacks, bottom first). An
    /// `instance` of a host of several takes those that `takes` gives it, and hosts them from now on.
    mutating func attach(
        host: String, instance: String? = nil, takes: (SessionRecord) -> Bool = { _ in true }, now: Int64
    ) -> [AppCallback] {
        var callbacks: [AppCallback] = []
        for index in sessions.indices
        where sessions[index].host == host && sessions[index].state == .detached && takes(sessions[index]) {
            sessions[index].instance = instance
            sessions[index].state = index == sessions.count - 1 ? .running : .paused
            sessions[index].updatedAt = now
            callbacks.append(AppCallback(sessions[index], .restore, ["record": sessions[index].json]))
        }
        return callbacks
    }

    /// The sessions of `host` on instance `from` move to instance `to` (restore callbacks, bottom
    /// first: the new process creates their delegates).
    mutating func move(host: String, from: String, to: String, now: Int64) -> [AppCallback] {
        var callbacks: [AppCallback] = []
        for index in sessions.indices
        where sessions[index].host == host && sessions[index].instance == from
            && sessions[index].state != .detached
        {
            sessions[index].instance = to
            sessions[index].updatedAt = now
            callbacks.append(AppCallback(sessions[index], .restore, ["record": sessions[index].json]))
        }
        return callbacks
    }

    /// Records what a session's delegate shows.
    mutating func setRoot(_ root: JSONValue, of id: String) {
        if let index = sessions.firstIndex(where: { $0.id == id }) { sessions[index].root = root }
    }

    // MARK: Helpers

    private mutating func popAbove(_ id: String, animated: Bool, now: Int64) -> Outcome {
        guard let index = sessions.firstIndex(where: { $0.id == id }) else { return Outcome() }
        return pop(downTo: index + 1, animated: animated)
    }

    /// Exits the sessions above the first `count`, top first; then their parents that stay hear of
    /// it (childDidFinish).
    private mutating func pop(downTo count: Int, animated: Bool) -> Outcome {
        var outcome = Outcome()
        while sessions.count > count, let last = sessions.last {
            sessions.removeLast()
            outcome.exited.append((last, nil, true))
            outcome.callbacks.append(AppCallback(last, .willTerminate, ["animated": .bool(animated)]))
        }
        for (record, _, _) in outcome.exited { notifyParent(of: record, result: .null, into: &outcome) }
        return outcome
    }

    private func notifyParent(of record: SessionRecord, result: JSONValue, into outcome: inout Outcome) {
        guard let parentID = record.parent, let parent = session(parentID) else { return }
        outcome.callbacks.append(
            AppCallback(parent, .childDidFinish, ["child": record.json, "result": result]))
    }

    private mutating func resumeTop(now: Int64, into outcome: inout Outcome) {
        guard let index = sessions.indices.last else { return }
        if sessions[index].state != .detached { sessions[index].state = .running }
        sessions[index].updatedAt = now
        outcome.callbacks += [
            AppCallback(sessions[index], .willResume, ["options": .emptyObject]),
            AppCallback(sessions[index], .didResume, ["options": .emptyObject]),
        ]
    }

    // MARK: Persistence

    var json: JSONValue {
        ["version": 1, "counter": .int(Int64(counter)), "sessions": .array(sessions.map(\.json))]
    }

    /// Restores a saved stack; every session is detached until its host registers.
    init(json: JSONValue, launcher: String?) throws(ProtocolError) {
        guard json["version"]?.intValue == 1 else {
            throw ProtocolError(
                .badRequest,
                "it is not a stack this broker wrote (no \"version\": 1 in an object)")
        }
        guard let sessions = json["sessions"]?.arrayValue else {
            throw ProtocolError(.badRequest, "its 'sessions' is not a list")
        }
        self.launcher = launcher
        self.sessions = try sessions.map { (value) throws(ProtocolError) in try SessionRecord(json: value) }
        // Ids are never given twice: the counter is at least the highest id on the stack, whatever
        // the file says of it.
        let highest = self.sessions.compactMap { UInt64($0.id.dropFirst()) }.max() ?? 0
        counter = max(UInt64(clamping: json["counter"]?.intValue ?? 0), highest)
        detachAll()
    }
}
