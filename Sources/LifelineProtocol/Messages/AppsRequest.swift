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

    init(_ fields: HeaderFields) throws(ProtocolError) {
        let operation = try fields.optionalString("op") ?? ""
        switch operation {
        case "list": self = .list
        case "current": self = .current
        case "find":
            guard let app = fields.value("app")?.stringValue else {
                throw fields.problem("APPS find needs a string 'app'")
            }
            self = .find(app: app, all: fields.value("all")?.boolValue == true)
        case "start", "setRoot": self = .start(try AppStart(fields, replacesRoot: operation == "setRoot"))
        case "exit":
            self = .exit(
                AppExit(
                    target: SessionTarget(fields), force: fields.value("force")?.boolValue ?? false,
                    result: fields.value("result"), animated: fields.value("animated")?.boolValue ?? true))
        case "exitAll": self = .exitAll
        case "dismiss": self = .dismiss
        case "popToRoot": self = .popToRoot
        case "action":
            guard let action = fields.value("action")?.stringValue else {
                throw fields.problem("APPS action needs a string 'action'")
            }
            self = .action(target: SessionTarget(fields), action: action, body: fields.value("body") ?? .null)
        default:
            throw fields.problem(
                "unknown APPS op '\(operation)'; ops: \(Self.operations.joined(separator: ", "))")
        }
    }

    /// The APPS header (with `opId` when given).
    package func json(operationID: String?) -> JSONValue {
        var members: [String: JSONValue] = ["op": .string(operation)]
        if let operationID { members["opId"] = .string(operationID) }
        switch self {
        case .list, .current, .exitAll, .dismiss, .popToRoot: break
        case .find(let app, let all):
            members["app"] = .string(app)
            if all { members["all"] = true }
        case .start(let start):
            members["app"] = .string(start.app)
            members["params"] = start.params
            members["mode"] = .string(start.mode.rawValue)
            if start.clearTop { members["clearTop"] = true }
            if let parent = start.parent { members["parent"] = .string(parent) }
        case .exit(let exit):
            exit.target?.write(into: &members)
            if exit.force { members["force"] = true }
            if let result = exit.result { members["result"] = result }
            if !exit.animated { members["animated"] = false }
        case .action(let target, let action, let body):
            target?.write(into: &members)
            members["action"] = .string(action)
            members["body"] = body
        }
        return .object(members)
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

    init?(_ fields: HeaderFields) {
        if let id = fields.value("session")?.stringValue {
            self = id == "top" ? .top : .session(id)
        } else if let app = fields.value("app")?.stringValue {
            self = .app(app)
        } else {
            return nil
        }
    }

    func write(into members: inout [String: JSONValue]) {
        switch self {
        case .top: members["session"] = "top"
        case .session(let id): members["session"] = .string(id)
        case .app(let app): members["app"] = .string(app)
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

    init(_ fields: HeaderFields, replacesRoot: Bool) throws(ProtocolError) {
        let operation = replacesRoot ? "setRoot" : "start"
        guard let app = fields.value("app")?.stringValue else {
            throw fields.problem("APPS \(operation) needs a string 'app'")
        }
        var mode = LaunchMode.pushWithAnimation
        if let text = fields.value("mode")?.stringValue {
            guard let parsed = LaunchMode(rawValue: text) else {
                throw fields.problem(
                    "unknown launch mode '\(text)'; modes: \(LaunchMode.allCases.map(\.rawValue).joined(separator: ", "))"
                )
            }
            mode = parsed
        }
        let params = fields.value("params") ?? .emptyObject
        guard case .object = params else {
            throw fields.problem("APPS \(operation) 'params' must be a JSON object")
        }
        self.init(
            app: app, params: params, mode: mode, clearTop: fields.value("clearTop")?.boolValue ?? false,
            parent: fields.value("parent")?.stringValue, replacesRoot: replacesRoot)
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
