/// One micro-app session on the Context's stack: an app started by name, living in a host process.
public struct SessionRecord: Sendable, Equatable {
    /// Unique for the Context's whole history (`s1`, `s2`, … kept across broker restarts).
    public var id: String
    public var app: String
    public var params: JSONValue
    public var mode: LaunchMode
    /// The service (host process) the session lives in.
    public var host: String
    /// The instance of ``host`` the session lives in, when the host runs several (nil otherwise): its
    /// callbacks go to that process alone.
    public var instance: String?
    public var state: SessionState
    /// The session that started this one, for coordinators (`childDidFinish`).
    public var parent: String?
    /// Wall clock, milliseconds since 1970.
    public var createdAt: Int64
    public var updatedAt: Int64
    /// What the app shows, as its delegate described it (our stand-in for rootController).
    public var root: JSONValue

    public init(
        id: String, app: String, params: JSONValue, mode: LaunchMode, host: String, state: SessionState,
        parent: String?,
        createdAt: Int64, updatedAt: Int64, root: JSONValue = .null, instance: String? = nil
    ) {
        self.id = id
        self.instance = instance
        self.app = app
        self.params = params
        self.mode = mode
        self.host = host
        self.state = state
        self.parent = parent
        self.createdAt = createdAt
        self.updatedAt = updatedAt
        self.root = root
    }

    package var json: JSONValue {
        var members: [String: JSONValue] = [
            "id": .string(id), "app": .string(app), "params": params, "mode": .string(mode.rawValue),
            "host": .string(host),
            "state": .string(state.rawValue), "parent": parent.map { .string($0) } ?? .null,
            "createdAt": .int(createdAt),
            "updatedAt": .int(updatedAt), "root": root,
        ]
        // Left out for a host of one process, so its records are as they always were.
        if let instance { members["instance"] = .string(instance) }
        return .object(members)
    }

    /// Reads a record (a reply, or the broker's state file).
    package init(json: JSONValue) throws(ProtocolError) {
        guard let id = json["id"]?.stringValue, let app = json["app"]?.stringValue,
            let host = json["host"]?.stringValue,
            let mode = json["mode"]?.stringValue.flatMap(LaunchMode.init(rawValue:)),
            let state = json["state"]?.stringValue.flatMap(SessionState.init(rawValue:))
        else { throw ProtocolError(.badRequest, "a session record needs id, app, host, mode and state") }
        self.init(
            id: id, app: app, params: json["params"] ?? .emptyObject, mode: mode, host: host, state: state,
            parent: json["parent"]?.stringValue, createdAt: json["createdAt"]?.intValue ?? 0,
            updatedAt: json["updatedAt"]?.intValue ?? 0,
            root: json["root"] ?? .null, instance: json["instance"]?.stringValue)
    }
}
