import LifelineProtocol

/// What a micro-app host without `admin` may change: the sessions of its own apps, and what its
/// callbacks ask for.
extension AppsFeature {
    /// True when `operationID` names a change asked for while a callback ran (`<callbackId>.<n>`)
    /// and that callback went to one of `hosts`.
    func isAskedByCallback(_ operationID: String, ofHosts hosts: Set<String>) -> Bool {
        guard let dot = operationID.lastIndex(of: "."),
            let host = callbackHosts.host(of: String(operationID[..<dot]))
        else { return false }
        return hosts.contains(host)
    }

    /// What `request` would change that is not hosted by `hosts` (one phrase); nil when it changes
    /// only their sessions: a start of one of their apps (not setRoot; with `clearTop` only when
    /// every session it would exit is theirs), an exit of or an action on one of their sessions.
    func foreignSessions(_ request: AppsRequest, hosts: Set<String>, registry: ServiceRegistry) -> String? {
        func foreign(_ record: SessionRecord) -> String? {
            hosts.contains(record.host)
                ? nil : "session \(record.id) (\(record.app)) is hosted by \(record.host)"
        }
        func target(_ target: SessionTarget?) -> SessionRecord? {
            switch target {
            case .top: stack.top
            case .session(let id): stack.session(id)
            case .app(let app): stack.newest(app)
            case nil: nil
            }
        }
        switch request {
        case .list, .current, .find: return nil
        case .start(let start):
            if start.replacesRoot { return "setRoot exits every session" }
            let offered = hosts.contains {
                registry.entry(named: $0)?.registration.apps.contains(start.app) == true
            }
            guard offered else { return "it does not host the app '\(start.app)'" }
            if let parent = start.parent, let record = stack.session(parent), let problem = foreign(record) {
                return problem
            }
            guard start.clearTop, let existing = stack.newest(start.app),
                let index = stack.sessions.firstIndex(where: { $0.id == existing.id })
            else { return nil }
            return stack.sessions[(index + 1)...].lazy.compactMap(foreign).first
        case .exit(let exit):
            return target(exit.target).flatMap(foreign)
        case .action(let session, _, _):
            return target(session).flatMap(foreign)
        case .exitAll: return "exitAll exits every session"
        case .dismiss: return "dismiss exits sessions it may not host"
        case .popToRoot: return "popToRoot exits every session above the bottom one"
        }
    }
}
