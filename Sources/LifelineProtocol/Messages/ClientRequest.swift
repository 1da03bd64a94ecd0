/// A request a client or a service sends to the broker: one case per command, each with its fields
/// already read and checked. ``decode(_:)`` is the only reader of these headers and
/// ``controlRequest(id:)`` the only writer.
package enum ClientRequest: Sendable, Equatable {
    /// Where is the bus, what are the heartbeat rules.
    case hello
    /// Join the registry (with an optional resume cursor).
    case register(RegisterRequest)
    /// Leave the registry.
    case unregister(UnregisterRequest)
    /// The sender is alive; never answered. A service says how many events its handlers' queue
    /// dropped since it started (they fell behind), how many wait, how many each handler ran, and
    /// how many payloads did not decode as its typed handlers' types.
    case heartbeat(
        dropped: UInt64?, queued: UInt64? = nil, handled: [String: UInt64]? = nil, name: String? = nil,
        undecodable: UInt64? = nil)
    /// findServiceByName.
    case lookup(name: String)
    /// Every registered service.
    case list
    /// A request/reply call through the broker.
    case call(ServiceCall)
    /// Publish an event on the bus.
    case publish(PublishRequest)
    /// Answer once the bus has seen the marker subscription `!token`.
    case attach(token: String)
    /// Offer an event to its handlers in order.
    case dispatch(DispatchRequest)
    /// Send the journal's events after a sequence.
    case replay(ReplayRequest)
    /// An acknowledged event was handled; never answered.
    case acknowledge(Acknowledgement)
    /// An operation on the micro-app stack; a change may carry the sender's id for it, so that a
    /// retry is done once.
    case apps(AppsRequest, operationID: String? = nil)
    /// An operation of the boot loader.
    case boot(BootRequest)
    /// The broker's counters (for `lifeline stats` and metrics).
    case stats
    /// Publish `dispatchDidStep` and `callDidFinish` for the next `seconds` (a lease; renew it).
    case trace(seconds: Int)
    /// The sending instance deactivated its actor `key` of `service`: the broker forgets the
    /// placement unless a call to it is still on its way.
    case release(service: String, key: String)
    /// Where the actors by key are placed (of `service`, or of every service).
    case actors(service: String?)

    /// The command this request is sent as.
    public var command: Command {
        switch self {
        case .hello: .hello
        case .register: .register
        case .unregister: .unregister
        case .heartbeat: .heartbeat
        case .lookup: .lookup
        case .list: .list
        case .call: .call
        case .publish: .publish
        case .attach: .attach
        case .dispatch: .dispatch
        case .replay: .replay
        case .acknowledge: .ack
        case .apps: .apps
        case .boot: .boot
        case .stats: .stats
        case .trace: .trace
        case .release: .release
        case .actors: .actors
        }
    }

    /// Reads a request the broker received; the error names the field and what was wrong, and
    /// carries the request id.
    public static func decode(_ request: ControlRequest) throws(ProtocolError) -> ClientRequest {
        let fields = HeaderFields(request)
        switch request.command {
        case .hello: return .hello
        case .heartbeat:
            var handled: [String: UInt64]?
            if let counts = fields.value("handled")?.objectValue {
                handled = [:]
                for (event, count) in counts.prefix(1000) {
                    handled?[event] = UInt64(max(0, count.intValue ?? 0))
                }
            }
            return .heartbeat(
                dropped: fields.value("dropped")?.intValue.map { UInt64(max(0, $0)) },
                queued: fields.value("queued")?.intValue.map { UInt64(max(0, $0)) }, handled: handled,
                name: try fields.optionalString("name"),
                undecodable: fields.value("undecodable")?.intValue.map { UInt64(max(0, $0)) })
        case .list: return .list
        case .register: return .register(try RegisterRequest(fields))
        case .unregister:
            return .unregister(try UnregisterRequest(fields))
        case .lookup: return .lookup(name: try fields.string("name"))
        case .call:
            var call = try ServiceCall(fields)
            call.body = request.payload ?? []
            return .call(call)
        case .publish:
            return .publish(try PublishRequest(fields, payload: request.payload))
        case .attach:
            let token = try fields.optionalString("token") ?? ""
            guard !token.isEmpty else { throw fields.problem("ATTACH needs a string 'token'") }
            return .attach(token: token)
        case .dispatch: return .dispatch(try DispatchRequest(fields, payload: request.payload))
        case .replay: return .replay(try ReplayRequest(fields))
        case .ack: return .acknowledge(try Acknowledgement(fields))
        case .apps:
            let operationID = try fields.optionalString("opId")
            if let operationID, operationID.isEmpty || operationID.utf8.count > 128 {
                throw fields.problem("APPS 'opId' must be 1...128 bytes")
            }
            return .apps(try AppsRequest(fields), operationID: operationID)
        case .boot: return .boot(try BootRequest(fields))
        case .stats: return .stats
        case .trace:
            guard let seconds = fields.value("seconds")?.intValue, (1...300).contains(seconds) else {
                throw fields.problem("TRACE needs 'seconds' within 1...300")
            }
            return .trace(seconds: Int(seconds))
        case .release:
            let key = try fields.string("key")
            if let problem = ActorKey.problem(key) { throw fields.problem("RELEASE 'key': \(problem)") }
            return .release(service: try fields.string("service"), key: key)
        case .actors: return .actors(service: try fields.optionalString("service"))
        default:
            throw fields.problem("\(request.command) is sent by the broker only")
        }
    }

    /// True for a stack change with an operation id (APPS `opId`): the broker carries it out once,
    /// so a client may send it again after losing the broker.
    public var isRepeatable: Bool {
        if case .apps(_, operationID: _?) = self { true } else { false }
    }

    /// The frames of ``controlRequest(id:)``; the header of a CALL and of a single event's PUBLISH is
    /// written without a tree.
    public func frames(id: [UInt8]) -> [[UInt8]] {
        switch self {
        case .call(let call): return call.frames(id: id)
        case .publish(let publish): return publish.frames(id: id) ?? controlRequest(id: id).frames()
        case .acknowledge(let ack): return ack.frames(id: id)
        default: return controlRequest(id: id).frames()
        }
    }

    /// The request on the wire, with request id `id`.
    public func controlRequest(id: [UInt8] = []) -> ControlRequest {
        switch self {
        case .hello, .list, .stats: ControlRequest(command, requestID: id)
        case .trace(let seconds):
            ControlRequest(.trace, requestID: id, header: ["seconds": .int(Int64(seconds))])
        case .heartbeat(let dropped, let queued, let handled, let name, let undecodable):
            ControlRequest(
                .heartbeat, requestID: id,
                header: .object(
                    [
                        "dropped": dropped.map { .int(Int64($0)) }, "queued": queued.map { .int(Int64($0)) },
                        "handled": handled.map { .object($0.mapValues { .int(Int64($0)) }) },
                        "name": name.map { .string($0) }, "undecodable": undecodable.map { .int(Int64($0)) },
                    ].compactMapValues { $0 }))
        case .register(let register): ControlRequest(.register, requestID: id, header: register.json)
        case .unregister(let unregister): unregister.controlRequest(id: id)
        case .lookup(let name): ControlRequest(.lookup, requestID: id, header: ["name": .string(name)])
        case .call(let call): call.controlRequest(id: id, payload: call.body)
        case .publish(let publish):
            ControlRequest(.publish, requestID: id, header: publish.header, payload: publish.frame)
        case .attach(let token): ControlRequest(.attach, requestID: id, header: ["token": .string(token)])
        case .dispatch(let dispatch):
            dispatch.controlRequest(id: id, payload: JSONWriter.encode(dispatch.payload))
        case .replay(let replay): replay.controlRequest(id: id)
        case .acknowledge(let ack): ack.controlRequest(id: id)
        case .apps(let apps, let operationID):
            ControlRequest(.apps, requestID: id, header: apps.json(operationID: operationID))
        case .boot(let boot): ControlRequest(.boot, requestID: id, header: boot.json)
        case .release(let service, let key):
            ControlRequest(
                .release, requestID: id, header: ["service": .string(service), "key": .string(key)])
        case .actors(let service):
            ControlRequest(
                .actors, requestID: id, header: service.map { ["service": .string($0)] } ?? .emptyObject)
        }
    }
}

/// UNREGISTER: leave the registry (the owner's connection, or the same instance, only).
package struct UnregisterRequest: HeaderMessage, Equatable {
    public var name: String
    public var instance: String?

    public init(name: String, instance: String?) {
        self.name = name
        self.instance = instance
    }

    package static let command = Command.unregister
    package static let blank = UnregisterRequest(name: "", instance: nil)

    package mutating func visit<Visitor: HeaderVisitor>(_ visitor: inout Visitor) throws(Visitor.Failure) {
        try visitor.field("instance", &instance)
        try visitor.field("name", &name)
    }
}
