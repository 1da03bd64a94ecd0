/// CALL: a request/reply call to a service's method, client → broker and broker → service.
package struct ServiceCall: Sendable, Equatable {
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

    init(_ fields: HeaderFields, body: [UInt8]?) throws(ProtocolError) {
        guard let service = fields.value("service")?.stringValue,
            let method = fields.value("method")?.stringValue
        else { throw fields.problem("CALL needs string fields 'service' and 'method'") }
        self.service = service
        self.method = method
        self.key = try fields.optionalString("key")
        if let key, let problem = ActorKey.problem(key) { throw fields.problem("CALL 'key': \(problem)") }
        self.timeoutMilliseconds = try fields.optionalInteger(
            "timeoutMs", in: 1...Self.maximumTimeoutMilliseconds)
        self.body = body ?? []
    }

    /// The CALL with request id `id`, as a client sends it and the broker forwards it: the frames of
    /// `ClientRequest.call(self).controlRequest(id:)`, its header written without a tree.
    public func frames(id: [UInt8]) -> [[UInt8]] {
        var header = JSONObjectWriter(
            capacity: 48 + method.utf8.count + service.utf8.count + (key?.utf8.count ?? 0))
        if let key { header.add("key", key) }
        header.add("method", method)
        header.add("service", service)
        if let timeoutMilliseconds { header.add("timeoutMs", Int64(timeoutMilliseconds)) }
        return [ProtocolID.controlBytes, Self.commandBytes, id, header.finish(), body]
    }

    /// What the call addresses: `service`, or `service/key` for an actor by key.
    public var address: String { key.map { "\(service)/\($0)" } ?? service }

    private static let commandBytes = Array(Command.call.rawValue.utf8)

    var header: JSONValue {
        var members: [String: JSONValue] = ["service": .string(service), "method": .string(method)]
        if let key { members["key"] = .string(key) }
        if let timeoutMilliseconds { members["timeoutMs"] = .int(Int64(timeoutMilliseconds)) }
        return .object(members)
    }
}
