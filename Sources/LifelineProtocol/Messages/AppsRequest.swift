/// APPS: one operation on the Context's micro-app stack (section 8 of docs/PROTOCOL.md).
package enum AppsRequest: Sendable, Equatable {
    /// The stack, bottom to top, and the Launcher.
    case list
    /// The top session.
    case current
    /// The newest session of `app`, or every session of it.
    case find(app: String, all: Bool)
    /// Start a session (setRoot when `replacesRoot`).
    case start(AppStart)
    /// Exit a session (the top one normally; any one when forced).
    case exit(AppExit)
    /// Exit every session.
    case exitAll
    /// Exit the topmost presented session and everything above it.
    case dismiss
    /// Exit everything above the bottom session.
    case popToRoot
    /// The session's delegate performs `action` with `body`.
    case action(target: SessionTarget?, action: String, body: JSONValue)

    /// Every operation's wire name.
    public static let operations = [
        "start", "exit", "exitAll", "dismiss", "popToRoot", "setRoot", "action", "list", "current", "find",
    ]

    /// The operation's wire name.
    public var operation: String {
        switch self {
        case .list: "list"
        case .current: "current"
        case .find: "find"
        case .start(let start): start.replacesRoot ? "setRoot" : "start"
        case .exit: "exit"
        case .exitAll: "exitAll"
        case .dismiss: "dismiss"
        case .popToRoot: "popToRoot"
        case .action: "action"
        }
    }

    /// True for the operations that only read the stack (answered at once, never queued).
    public var isQuery: Bool {
        switch self {
        case .list, .current, .find: true
        default: false
        }
    }

    /// Reads an APPS header: its operation and that operation's fields.
    /// - Throws: ``ProtocolError`` (400) naming the operation, the field and what was wrong.
    init(_ header: AppsHeader, _ fields: HeaderFields) throws(ProtocolError) {
        let operation = header.op ?? ""
        switch operation {
        case "list": self = .list
        case "current": self = .current
        case "find":
            guard let app = header.app else { throw fields.problem("APPS find needs a string 'app'") }
            self = .find(app: app, all: header.all)
        case "start", "setRoot":
            self = .start(
                try AppStart(
                    app: header.app, mode: header.mode, params: header.params, clearTop: header.clearTop,
                    parent: header.parent, replacesRoot: operation == "setRoot", fields))
        case "exit":
            guard let target = SessionTarget(session: header.session, app: header.app) else {
                throw fields.problem("APPS exit needs a string 'session' (an id or 'top') or 'app'")
            }
            self = .exit(
                AppExit(
                    target: target, force: header.force,
                    result: header.result, animated: header.animated))
        case "exitAll": self = .exitAll
        case "dismiss": self = .dismiss
        case "popToRoot": self = .popToRoot
        case "action":
            guard let action = header.action else {
                throw fields.problem("APPS action needs a string 'action'")
            }
            guard let target = SessionTarget(session: header.session, app: header.app) else {
                throw fields.problem("APPS action needs a string 'session' (an id or 'top') or 'app'")
            }
            self = .action(
                target: target, action: action,
                body: header.body ?? .null)
        default:
            throw fields.problem(
                "unknown APPS op '\(operation)'; ops: \(Self.operations.joined(separator: ", "))")
        }
    }

    /// The APPS header of this operation (with `opId` when given).
    package func header(operationID: String?) -> AppsHeader {
        var header = AppsHeader()
        header.op = operation
        header.opId = operationID
        switch self {
        case .list, .current, .exitAll, .dismiss, .popToRoot: break
        case .find(let app, let all):
            header.app = app
            header.all = all
        case .start(let start):
            header.app = start.app
            header.params = start.params
            header.mode = start.mode.rawValue
            header.clearTop = start.clearTop
            header.parent = start.parent
        case .exit(let exit):
            exit.target?.write(into: &header)
            header.force = exit.force
            header.result = exit.result
            header.animated = exit.animated
        case .action(let target, let action, let body):
            target?.write(into: &header)
            header.action = action
            header.body = body
        }
        return header
    }
}

/// APPS's header, declared once: the operation, its id, and the fields of every operation (each
/// reads its own).
package struct AppsHeader: HeaderMessage, Equatable {
    var action: String?
    var all = false
    var animated = true
    var app: String?
    var body: JSONValue?
    var clearTop = false
    var force = false
    var mode: String?
    var op: String?
    var opId: String?
    var params: JSONValue?
    var parent: String?
    var result: JSONValue?
    var session: String?

    package static let command = Command.apps
    package static let blank = AppsHeader()

    package mutating func visit<Visitor: HeaderVisitor>(_ visitor: inout Visitor) throws(Visitor.Failure) {
        // Each operation reads its own fields; those of the others are not held against it.
        try visitor.field("action", tolerant: &action)
        try visitor.field("all", tolerant: &all, default: false)
        try visitor.field("animated", tolerant: &animated, default: true)
        try visitor.field("app", tolerant: &app)
        try visitor.field("body", any: &body)
        try visitor.field("clearTop", tolerant: &clearTop, default: false)
        try visitor.field("force", tolerant: &force, default: false)
        try visitor.field("mode", tolerant: &mode)
        try visitor.field("op", &op)
        try visitor.field("opId", &opId)
        try visitor.check(
            opId.map { $0.isEmpty || $0.utf8.count > 128 } == true ? "'opId' must be 1...128 bytes" : nil)
        try visitor.field("params", any: &params)
        try visitor.field("parent", tolerant: &parent)
        try visitor.field("result", any: &result)
        try visitor.field("session", tolerant: &session)
    }
}

/// Which session an operation means: the top one, one by id, or the newest of an app.
package enum SessionTarget: Sendable, Equatable {
    case top
    case session(String)
    case app(String)

    /// A session id (`s3`) or `top` names a session; anything else an app.
    public init(parsing text: String) {
        if text == "top" {
            self = .top
        } else if text.count > 1, text.first == "s", text.dropFirst().allSatisfy(\.isNumber) {
            self = .session(text)
        } else {
            self = .app(text)
        }
    }

    /// The target a header names: `session` (an id, or `top`), else `app`; nil for neither.
    init?(session: String?, app: String?) {
        if let session {
            self = session == "top" ? .top : .session(session)
        } else if let app {
            self = .app(app)
        } else {
            return nil
        }
    }

    func write(into header: inout AppsHeader) {
        switch self {
        case .top: header.session = "top"
        case .session(let id): header.session = id
        case .app(let app): header.app = app
        }
    }
}

/// APPS start / setRoot: what to start and how.
package struct AppStart: Sendable, Equatable {
    public var app: String
    public var params: JSONValue
    public var mode: LaunchMode
    public var clearTop: Bool
    /// The session that asks (its child finishes back to it).
    public var parent: String?
    /// setRoot: exit everything above the Launcher first.
    public var replacesRoot: Bool

    public init(
        app: String, params: JSONValue = .emptyObject, mode: LaunchMode = .pushWithAnimation,
        clearTop: Bool = false, parent: String? = nil, replacesRoot: Bool = false
    ) {
        self.app = app
        self.params = params
        self.mode = mode
        self.clearTop = clearTop
        self.parent = parent
        self.replacesRoot = replacesRoot
    }

    /// The start a header's fields name (APPS start or setRoot, or INTERCEPT).
    /// - Throws: ``ProtocolError`` (400) naming what is missing or wrong.
    init(
        app: String?, mode: String?, params: JSONValue?, clearTop: Bool, parent: String?, replacesRoot: Bool,
        _ fields: HeaderFields
    ) throws(ProtocolError) {
        let operation = replacesRoot ? "setRoot" : "start"
        guard let app else { throw fields.problem("APPS \(operation) needs a string 'app'") }
        var launchMode = LaunchMode.pushWithAnimation
        if let mode {
            guard let parsed = LaunchMode(rawValue: mode) else {
                throw fields.problem(
                    "unknown launch mode '\(mode)'; modes: \(LaunchMode.allCases.map(\.rawValue).joined(separator: ", "))"
                )
            }
            launchMode = parsed
        }
        let params = params ?? .emptyObject
        guard case .object = params else {
            throw fields.problem("APPS \(operation) 'params' must be a JSON object")
        }
        self.init(
            app: app, params: params, mode: launchMode, clearTop: clearTop, parent: parent,
            replacesRoot: replacesRoot)
    }
}

/// INTERCEPT's header (broker → interceptor), declared once: the start to allow, change or refuse.
struct InterceptHeader: HeaderMessage, Equatable {
    var app: String?
    var clearTop = false
    var mode: String?
    var params: JSONValue?
    var parent: String?
    var timeoutMs: Int?

    static let command = Command.intercept
    static let blank = InterceptHeader()

    init() {}

    init(_ start: AppStart, timeoutMilliseconds: Int? = nil) {
        timeoutMs = timeoutMilliseconds
        app = start.app
        clearTop = start.clearTop
        mode = start.mode.rawValue
        params = start.params
        parent = start.parent
    }

    mutating func visit<Visitor: HeaderVisitor>(_ visitor: inout Visitor) throws(Visitor.Failure) {
        try visitor.field("app", tolerant: &app)
        // All five are written, `clearTop` false and `parent` null too, as interceptors read them.
        var clear = JSONValue.bool(clearTop)
        try visitor.field("clearTop", any: &clear, default: false)
        clearTop = clear.boolValue ?? false
        try visitor.field("mode", tolerant: &mode)
        try visitor.field("params", any: &params)
        var parentValue = parent.map(JSONValue.string) ?? .null
        try visitor.field("parent", any: &parentValue, default: .null)
        parent = parentValue.stringValue
        try visitor.field("timeoutMs", &timeoutMs, in: BrokerRequest.timeoutRange)
    }
}

/// APPS exit: which session, and how.
package struct AppExit: Sendable, Equatable {
    public var target: SessionTarget?
    /// Exit even a session that is not on top, without asking shouldTerminate.
    public var force: Bool
    /// What the parent's childDidFinish receives.
    public var result: JSONValue?
    public var animated: Bool

    public init(target: SessionTarget?, force: Bool = false, result: JSONValue? = nil, animated: Bool = true)
    {
        self.target = target
        self.force = force
        self.result = result
        self.animated = animated
    }
}
