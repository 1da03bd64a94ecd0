import LifelineProtocol

/// A request to start a micro-app, as an interceptor sees it (mPaaS registerStartApplicationHandler).
public struct StartRequest: Sendable, Equatable {
    public var app: String
    public var params: JSONValue
    public var mode: LaunchMode
    public var clearTop: Bool
    /// The session that asked, if any.
    public var parent: String?
}

/// What an interceptor decides about a start request.
public enum StartDecision: Sendable, Equatable {
    /// Let it go ahead unchanged.
    case allow
    /// Go ahead with another app, params or mode (nil keeps what was asked).
    case change(app: String? = nil, params: JSONValue? = nil, mode: LaunchMode? = nil)
    /// Refuse it; the caller gets 403 with the reason.
    case refuse(String)

    var json: JSONValue {
        switch self {
        case .allow: return ["action": "allow"]
        case .refuse(let reason): return ["action": "refuse", "reason": .string(reason)]
        case .change(let app, let params, let mode):
            var members: [String: JSONValue] = ["action": "change"]
            if let app { members["app"] = .string(app) }
            if let params { members["params"] = params }
            if let mode { members["mode"] = .string(mode.rawValue) }
            return .object(members)
        }
    }
}
