/// A request a client or a service sends to the broker: one case per command, each with its fields
/// already read and checked. ``decode(_:)`` is the only reader of these headers and
/// ``frames(id:)`` the only writer (each header from its one declaration, ``HeaderMessage``).
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
    case heartbeat(HeartbeatHeader)
    /// findServiceByName.
    case lookup(LookupHeader)
    /// Every registered service.
    case list
    /// A request/reply call through the broker.
    case call(ServiceCall)
    /// Publish an event on the bus.
    case publish(PublishRequest)
    /// Answer once the bus has seen the marker subscription `!token`.
    case attach(AttachHeader)
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
    case trace(TraceHeader)
    /// The sending instance deactivated its actor `key` of `service`: the broker forgets the
    /// placement unless a call to it is still on its way.
    case release(ReleaseHeader)
    /// Where the actors by key are placed (of `service`, or of every service).
    case actors(ActorsHeader)

    /// A heartbeat with what the handlers dropped, have queued and ran, its name, what did not
    /// decode and what threw.
    package static func heartbeat(
        dropped: UInt64?, queued: UInt64? = nil, handled: [String: UInt64]? = nil, name: String? = nil,
        undecodable: UInt64? = nil, failed: UInt64? = nil
    ) -> ClientRequest {
        .heartbeat(
            HeartbeatHeader(
                dropped: dropped, failed: failed, handled: handled, name: name, queued: queued,
                undecodable: undecodable))
    }

    /// findServiceByName of `name`.
    package static func lookup(name: String) -> ClientRequest { .lookup(LookupHeader(name: name)) }

    /// ATTACH with the marker `token`.
    package static func attach(token: String) -> ClientRequest { .attach(AttachHeader(token: token)) }

    /// TRACE for `seconds`.
    package static func trace(seconds: Int) -> ClientRequest { .trace(TraceHeader(seconds: seconds)) }

    /// RELEASE of `service`'s actor `key`.
    package static func release(service: String, key: String) -> ClientRequest {
        .release(ReleaseHeader(key: key, service: service))
    }

    /// ACTORS of `service` (every service's when nil).
    package static func actors(service: String?) -> ClientRequest { .actors(ActorsHeader(service: service)) }

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
        case .heartbeat: return .heartbeat(try HeartbeatHeader(fields))
        case .list: return .list
        case .register: return .register(try RegisterRequest(fields))
        case .unregister:
            return .unregister(try UnregisterRequest(fields))
        case .lookup: return .lookup(try LookupHeader(fields))
        case .call:
            var call = try ServiceCall(fields)
            call.body = request.payload ?? []
            return .call(call)
        case .publish:
            return .publish(try PublishRequest(fields, payload: request.payload))
        case .attach: return .attach(try AttachHeader(fields))
        case .dispatch: return .dispatch(try DispatchRequest(fields, payload: request.payload))
        case .replay: return .replay(try ReplayRequest(fields))
        case .ack: return .acknowledge(try Acknowledgement(fields))
        case .apps:
            let header = try AppsHeader(fields)
            return .apps(try AppsRequest(header, fields), operationID: header.opId)
        case .boot: return .boot(try BootRequest(fields))
        case .stats: return .stats
        case .trace: return .trace(try TraceHeader(fields))
        case .release: return .release(try ReleaseHeader(fields))
        case .actors: return .actors(try ActorsHeader(fields))
        default:
            throw fields.problem("\(request.command) is sent by the broker only")
        }
    }

    /// True for a stack change with an operation id (APPS `opId`): the broker carries it out once,
    /// so a client may send it again after losing the broker.
    public var isRepeatable: Bool {
        if case .apps(_, operationID: _?) = self { true } else { false }
    }

    /// The request on the wire with request id `id`: its frames, each header written from its one
    /// declaration (``HeaderMessage``) straight to bytes.
    public func frames(id: [UInt8]) -> [[UInt8]] {
        switch self {
        case .hello, .list, .stats: [ProtocolID.controlBytes, command.bytes, id, Self.emptyHeader]
        case .trace(let trace): trace.frames(id: id)
        case .heartbeat(let heartbeat): heartbeat.frames(id: id)
        case .register(let register): register.frames(id: id)
        case .unregister(let unregister): unregister.frames(id: id)
        case .lookup(let lookup): lookup.frames(id: id)
        case .call(let call): call.frames(id: id)
        case .publish(let publish): publish.frames(id: id)
        case .attach(let attach): attach.frames(id: id)
        case .dispatch(let dispatch): dispatch.frames(id: id, payload: JSONWriter.encode(dispatch.payload))
        case .replay(let replay): replay.frames(id: id)
        case .acknowledge(let ack): ack.frames(id: id)
        case .apps(let apps, let operationID): apps.header(operationID: operationID).frames(id: id)
        case .boot(let boot): boot.header.frames(id: id)
        case .release(let release): release.frames(id: id)
        case .actors(let actors): actors.frames(id: id)
        }
    }

    static let emptyHeader = Array("{}".utf8)

    /// The request as a peer receives it, with request id `id` (its header as a tree: for tests and
    /// logs; ``frames(id:)`` is what is sent).
    public func controlRequest(id: [UInt8] = []) -> ControlRequest {
        ControlRequest(written: frames(id: id))
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
