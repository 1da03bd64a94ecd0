/// The lifecycle callbacks of a micro-app session (section 8 of docs/PROTOCOL.md).
package enum AppCallbackName: String, Sendable, Equatable, CaseIterable {
    case didCreate, willStartLaunching, didFinishLaunching, willPause, willResume, didResume, willTerminate
    case shouldTerminate, childDidFinish, restore, action
}

/// APP: one callback of one session, broker → host.
package struct AppCallbackRequest: Sendable, Equatable {
    public var session: String
    public var app: String
    public var callback: AppCallbackName
    /// The callback's arguments (see the table in docs/PROTOCOL.md §8).
    public var arguments: JSONValue
    /// The broker's id for this callback: the same when it is delivered again after a broker
    /// restart, so a host runs it once; stack changes made while it runs derive their ids from it.
    public var callbackID: String?

    public init(
        session: String, app: String, callback: AppCallbackName, arguments: JSONValue = .emptyObject,
        callbackID: String? = nil
    ) {
        self.session = session
        self.app = app
        self.callback = callback
        self.arguments = arguments
        self.callbackID = callbackID
    }

    init(_ fields: HeaderFields, arguments: [UInt8]?) throws(ProtocolError) {
        session = try fields.string("session")
        app = try fields.optionalString("app") ?? ""
        let name = try fields.string("callback")
        guard let callback = AppCallbackName(rawValue: name) else {
            throw fields.problem(
                "unknown callback '\(name)'; callbacks: \(AppCallbackName.allCases.map(\.rawValue).joined(separator: ", "))"
            )
        }
        self.callback = callback
        callbackID = try fields.optionalString("callbackId")
        do {
            self.arguments = try JSONValue.payload(arguments, fallback: .emptyObject)
        } catch {
            throw fields.problem("APP arguments are not JSON: \(error)")
        }
    }

    var header: JSONValue {
        var members: [String: JSONValue] = [
            "session": .string(session), "app": .string(app), "callback": .string(callback.rawValue),
        ]
        if let callbackID { members["callbackId"] = .string(callbackID) }
        return .object(members)
    }
}
