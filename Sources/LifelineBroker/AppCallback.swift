import LifelineProtocol

/// One lifecycle callback of a micro-app session, delivered to its host in order.
struct AppCallback: Equatable {
    enum Name: String {
        case didCreate, willStartLaunching, didFinishLaunching, willPause, willResume, didResume,
            willTerminate
        case shouldTerminate, childDidFinish, restore, action
    }

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
