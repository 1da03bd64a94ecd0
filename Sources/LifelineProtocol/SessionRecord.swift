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
}

extension SessionRecord: WireRecord {
    package static var blank: SessionRecord {
        SessionRecord(
            id: "", app: "", params: .emptyObject, mode: .pushWithAnimation, host: "", state: .launching,
            parent: nil, createdAt: 0,
            updatedAt: 0)
    }
    package static var recordName: String { "a session record" }

    package mutating func visit<Visitor: HeaderVisitor>(_ visitor: inout Visitor) throws(Visitor.Failure) {
        try visitor.field("app", &app)
        try visitor.field("createdAt", &createdAt, default: 0)
        try visitor.field("host", &host)
        try visitor.field("id", &id)
        // Left out for a host of one process, so its records are as they always were.
        try visitor.field("instance", &instance)
        try visitor.field("mode", choice: &mode)
        try visitor.field("params", any: &params, default: .emptyObject)
        try visitor.field("parent", nullable: &parent)
        try visitor.field("root", any: &root, default: .null)
        try visitor.field("state", choice: &state)
        try visitor.field("updatedAt", &updatedAt, default: 0)
    }
}
