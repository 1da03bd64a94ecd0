/// CALL: a request/reply call to a service's method, client → broker and broker → service.
package struct ServiceCall: HeaderMessage, Equatable {
    /// The longest deadline a call may ask for.
    public static let maximumTimeoutMilliseconds = 3_600_000

    public var service: String
    public var method: String
    /// The key of the actor called, for a service that hosts actors by key (`cart/ana`); nil for the
    /// service itself.
    public var key: String?
    /// The caller's deadline; nil lets the broker choose its default.
    public var timeoutMilliseconds: Int?
    /// The call body: JSON text by convention, empty for null.
    public var body: [UInt8]

    public init(
        service: String, method: String, key: String? = nil, timeoutMilliseconds: Int? = nil,
        body: [UInt8] = []
    ) {
        self.service = service
        self.method = method
        self.key = key
        self.timeoutMilliseconds = timeoutMilliseconds
        self.body = body
    }

    /// The CALL with request id `id`, as a client sends it and the broker forwards it.
    public func frames(id: [UInt8]) -> [[UInt8]] { frames(id: id, payload: body) }

    /// What the call addresses: `service`, or `service/key` for an actor by key.
    public var address: String { key.map { "\(service)/\($0)" } ?? service }

    package static let command = Command.call
    package static let blank = ServiceCall(service: "", method: "")

    package mutating func visit<Visitor: HeaderVisitor>(_ visitor: inout Visitor) throws(Visitor.Failure) {
        try visitor.field("key", &key)
        try visitor.check(key.flatMap(ActorKey.problem).map { "'key': \($0)" })
        try visitor.field("method", &method)
        try visitor.field("service", &service)
        try visitor.field("timeoutMs", &timeoutMilliseconds, in: 1...Self.maximumTimeoutMilliseconds)
    }
}
