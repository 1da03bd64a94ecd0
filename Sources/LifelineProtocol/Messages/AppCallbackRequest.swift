/// The lifecycle callbacks of a micro-app session (section 8 of docs/PROTOCOL.md).
package enum AppCallbackName: String, Sendable, Equatable, CaseIterable {
    case didCreate, willStartLaunching, didFinishLaunching, willPause, willResume, didResume, willTerminate
    case shouldTerminate, childDidFinish, restore, action
}

/// APP: one callback of one session, broker → host.
package struct AppCallbackRequest: HeaderMessage, Equatable {
    public var session: String
    public var app: String
    public var callback: AppCallbackName
    /// The callback's arguments (see the table in docs/PROTOCOL.md §8).
    public var arguments: JSONValue
    /// The broker's id for this callback: the same when it is delivered again after a broker
    /// restart, so a host runs it once; stack changes made while it runs derive their ids from it.
    public var callbackID: String?
    /// How long the broker waits for the answer; a stopping host waits no longer for the callback.
    package var timeoutMilliseconds: Int?

    public init(
        session: String, app: String, callback: AppCallbackName, arguments: JSONValue = .emptyObject,
        callbackID: String? = nil, timeoutMilliseconds: Int? = nil
    ) {
        self.timeoutMilliseconds = timeoutMilliseconds
        self.session = session
        self.app = app
        self.callback = callback
        self.arguments = arguments
        self.callbackID = callbackID
    }

    /// Reads an APP: its header, and `arguments`, the callback's JSON arguments.
    /// - Throws: ``ProtocolError`` (400) naming the field and what was wrong.
    init(_ fields: HeaderFields, arguments: [UInt8]?) throws(ProtocolError) {
        var request = Self.blank
        var reader = HeaderReader(fields)
        try request.visit(&reader)
        do {
            request.arguments = try JSONValue.payload(arguments, fallback: .emptyObject)
        } catch {
            throw fields.problem("APP arguments are not JSON: \(error)")
        }
        self = request
    }

    package static let command = Command.app
    package static let blank = AppCallbackRequest(session: "", app: "", callback: .action)

    package mutating func visit<Visitor: HeaderVisitor>(_ visitor: inout Visitor) throws(Visitor.Failure) {
        var app: String? = app
        try visitor.field("app", &app)
        self.app = app ?? ""
        var callback: AppCallbackName? = callback
        try visitor.field("callback", &callback)
        try visitor.check(callback == nil ? "needs a string 'callback'" : nil)
        self.callback = callback ?? .action
        try visitor.field("callbackId", &callbackID)
        try visitor.field("session", &session)
        try visitor.field("timeoutMs", &timeoutMilliseconds, in: BrokerRequest.timeoutRange)
    }
}
