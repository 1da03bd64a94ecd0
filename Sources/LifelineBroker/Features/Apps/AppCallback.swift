import LifelineProtocol

/// One lifecycle callback of a micro-app session, delivered to its host in order.
struct AppCallback: Equatable {
    typealias Name = AppCallbackName

    var session: String
    var app: String
    var host: String
    /// The instance of `host` that hosts the session, when the host runs several.
    var instance: String?
    var name: Name
    var arguments: JSONValue = .emptyObject
    /// Given when the change that makes it is committed; kept when it is delivered again.
    var id: String?

    init(_ record: SessionRecord, _ name: Name, _ arguments: JSONValue = .emptyObject) {
        session = record.id
        app = record.app
        host = record.host
        instance = record.instance
        self.name = name
        self.arguments = arguments
    }
}

extension AppCallback {
    /// The APP request that delivers it, answered within `timeoutMilliseconds`.
    func request(timeoutMilliseconds: Int) -> BrokerRequest {
        .app(
            AppCallbackRequest(
                session: session, app: app, callback: name, arguments: arguments, callbackID: id,
                timeoutMilliseconds: timeoutMilliseconds))
    }

    /// How `sessions.json` keeps a callback still to deliver.
    var json: JSONValue {
        var members: [String: JSONValue] = [
            "session": .string(session), "app": .string(app), "host": .string(host),
            "callback": .string(name.rawValue), "arguments": arguments, "id": id.map { .string($0) } ?? .null,
        ]
        if let instance { members["instance"] = .string(instance) }
        return .object(members)
    }

    /// A callback read back from `sessions.json`; nil when it is not one.
    init?(json: JSONValue) {
        guard let session = json["session"]?.stringValue, let app = json["app"]?.stringValue,
            let host = json["host"]?.stringValue,
            let name = json["callback"]?.stringValue.flatMap(Name.init(rawValue:))
        else { return nil }
        self.session = session
        self.app = app
        self.host = host
        instance = json["instance"]?.stringValue
        self.name = name
        arguments = json["arguments"] ?? .emptyObject
        id = json["id"]?.stringValue
    }
}
