/// What an interceptor decides about a start request (the INTERCEPT reply).
public enum StartDecision: Sendable, Equatable {
    /// Let it go ahead unchanged.
    case allow
    /// Go ahead with another app, params or mode (nil keeps what was asked).
    case change(app: String? = nil, params: JSONValue? = nil, mode: LaunchMode? = nil)
    /// Refuse it; the caller gets 403 with the reason.
    case refuse(String)

    /// Reads the reply body; anything unreadable allows the start.
    package init(bytes: [UInt8]) {
        let record = (try? Record(bytes: bytes)) ?? .blank
        switch record.action {
        case "refuse": self = .refuse(record.reason ?? "no reason given")
        case "change":
            var params: JSONValue?
            if let given = record.params, case .object = given { params = given }
            self = .change(
                app: record.app, params: params, mode: record.mode.flatMap(LaunchMode.init(rawValue:)))
        default: self = .allow
        }
    }

    /// The reply body.
    package var bytes: [UInt8] {
        switch self {
        case .allow: Record(action: "allow").bytes
        case .refuse(let reason): Record(action: "refuse", reason: reason).bytes
        case .change(let app, let params, let mode):
            Record(action: "change", app: app, mode: mode?.rawValue, params: params).bytes
        }
    }

    /// The reply's fields, declared once: `{"action": "allow" | "change" | "refuse", "app"?, "mode"?,
    /// "params"?, "reason"?}`, read tolerantly (a value of another kind is absent).
    struct Record: WireRecord, Equatable {
        var action: String?
        var app: String?
        var mode: String?
        var params: JSONValue?
        var reason: String?

        static let blank = Record()
        static let recordName = "the INTERCEPT reply"

        mutating func visit<Visitor: HeaderVisitor>(_ visitor: inout Visitor) throws(Visitor.Failure) {
            try visitor.field("action", tolerant: &action)
            try visitor.field("app", tolerant: &app)
            try visitor.field("mode", tolerant: &mode)
            try visitor.field("params", any: &params)
            try visitor.field("reason", tolerant: &reason)
        }
    }
}
