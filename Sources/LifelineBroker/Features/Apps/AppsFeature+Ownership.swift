import LifelineProtocol

/// What a micro-app host without `admin` may change: the sessions of its own apps, and what a
/// Router may ask for while one of its callbacks runs. Checked when the change arrives (a clear
/// 403 at once) and again when it runs (the stack may have changed while it was queued).
extension AppsFeature {
    /// Why the peer `peer` may not make the change `request`; nil when it may (an admin key, a peer
    /// without a key, or a host changing what it may).
    func refusal(
        of request: AppsRequest, operationID: String?, peer: [UInt8], in core: BrokerCore
    ) -> String? {
        guard !request.isQuery, let policy = core.policy, let key = core.peerKeys[peer] else { return nil }
        guard
            let denial = policy.denial(
                publicKey: key, .admin("change the micro-app stack (APPS \(request.operation))"))
        else { return nil }
        let hosts = Set(
            core.registry.entries.values.filter {
                $0.owner == key && !$0.registration.apps.isEmpty
            }.map(\.registration.name))
        if hosts.isEmpty { return denial }
        // A change done already is answered as a repeat and changes nothing.
        if let operationID, done.contains(operationID) { return nil }
        let problem: String?
        if let operationID, let callback = runningCallback(operationID, ofHosts: hosts) {
            problem = routerProblem(request, callback: callback, hosts: hosts)
        } else {
            problem = foreignSessions(request, hosts: hosts, in: core)
        }
        guard let problem else { return nil }
        return
            "\(denial.prefix { $0 != ":" }): a micro-app host without 'admin' may change only its own sessions (hosted by \(hosts.sorted().joined(separator: ", "))), and \(problem)"
    }

    /// The callback that `operationID` (`<callbackId>.<n>`) was asked for in, when that callback
    /// went to one of `hosts` and is not answered yet: the one the change in progress waits for, or
    /// one that waits for its host to come back.
    private func runningCallback(_ operationID: String, ofHosts hosts: Set<String>) -> AppCallback? {
        guard let dot = operationID.lastIndex(of: "."),
            UInt64(operationID[operationID.index(after: dot)...]) != nil
        else { return nil }
        let id = String(operationID[..<dot])
        if let transition, let awaiting = transition.awaiting, let callback = awaiting.callback,
            callback.id == id, hosts.contains(callback.host)
        {
            return callback
        }
        return deferred.first { $0.id == id && hosts.contains($0.host) }
    }

    /// What a change asked for in a callback may not do: what no Router asks for (exitAll, an
    /// action, an exit of another host's session by name).
    private func routerProblem(_ request: AppsRequest, callback: AppCallback, hosts: Set<String>) -> String? {
        switch request {
        case .start, .dismiss, .popToRoot, .list, .current, .find: return nil
        case .exit(let exit):
            if case .top? = exit.target { return nil }
            guard let record = stack.session(for: exit.target), !hosts.contains(record.host) else {
                return nil
            }
            return "session \(record.id) (\(record.app)) is hosted by \(record.host)"
        case .exitAll: return "exitAll exits every session (no Router asks for it)"
        case .action: return "an action is not a Router change"
        }
    }

    /// What `request` would change that is not hosted by `hosts` (one phrase); nil when it changes
    /// only their sessions: a start of one of their apps on one of them (not setRoot; when it would
    /// exit sessions above an existing one — clearTop, or the Launcher — only when those are theirs),
    /// an exit of or an action on one of their sessions.
    func foreignSessions(_ request: AppsRequest, hosts: Set<String>, in core: BrokerCore) -> String? {
        func foreign(_ record: SessionRecord) -> String? {
            hosts.contains(record.host)
                ? nil : "session \(record.id) (\(record.app)) is hosted by \(record.host)"
        }
        switch request {
        case .list, .current, .find: return nil
        case .start(let start):
            if start.replacesRoot { return "setRoot exits every session" }
            // The host the broker would start it on (the first that offers it).
            guard let host = Self.hosts(offering: start.app, in: core).first?.registration.name,
                hosts.contains(host)
            else { return "it does not host the app '\(start.app)'" }
            if let parent = start.parent, let record = stack.session(parent), let problem = foreign(record) {
                return problem
            }
            guard start.clearTop || start.app == stack.launcher, let existing = stack.newest(start.app),
                let index = stack.sessions.firstIndex(where: { $0.id == existing.id })
            else { return nil }
            return stack.sessions[(index + 1)...].lazy.compactMap(foreign).first
        case .exit(let exit):
            return stack.session(for: exit.target).flatMap(foreign)
        case .action(let session, _, _):
            return stack.session(for: session).flatMap(foreign)
        case .exitAll: return "exitAll exits every session"
        case .dismiss: return "dismiss exits sessions it may not host"
        case .popToRoot: return "popToRoot exits every session above the bottom one"
        }
    }
}
