/// What an interceptor decides about a start request (the INTERCEPT reply).
public enum StartDecision: Sendable, Equatable {
    /// Let it go ahead unchanged.
    case allow
    /// Go ahead with another app, params or mode (nil keeps what was asked).
    case change(app: String? = nil, params: JSONValue? = nil, mode: LaunchMode? = nil)
    /// Refuse it; the caller gets 403 with the reason.
    case refuse(String)

    /// Reads the reply body; anything unreadable allows the start.
    package init(json: JSONValue) {
        switch json["action"]?.stringValue {
        case "refuse": self = .refuse(json["reason"]?.stringValue ?? "no reason given")
        case "change":
            var params: JSONValue?
            if let given = json["params"], case .object = given { params = given }
            self = .change(
                app: json["app"]?.stringValue, params: params,
                mode: json["mode"]?.stringValue.flatMap(LaunchMode.init(rawValue:)))
        default: self = .allow
        }
    }

    package var json: JSONValue {
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
