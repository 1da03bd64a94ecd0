import LifelineProtocol

/// One lifecycle callback of a micro-app session, delivered to its host in order.
struct AppCallback: Equatable {
    typealias Name = AppCallbackName

    var session: String
    var app: String
    var host: String
    var name: Name
    var arguments: JSONValue = .emptyObject

    init(_ record: SessionRecord, _ name: Name, _ arguments: JSONValue = .emptyObject) {
        session = record.id
        app = record.app
        host = record.host
        self.name = name
        self.arguments = arguments
    }
}

extension AppCallback {
    /// The APP request that delivers it.
    var request: BrokerRequest {
        .app(AppCallbackRequest(session: session, app: app, callback: name, arguments: arguments))
    }
}
