/// A request the broker sends to a service or host: one case per command, each with its fields read
/// and checked. ``decode(_:)`` is the only reader of these headers and ``frames(id:)`` the only
/// writer (each header from its one declaration, ``HeaderMessage``).
package enum BrokerRequest: Sendable, Equatable {
    /// The broker is alive; never answered.
    case heartbeat
    /// Forget your registration and start again with HELLO (or stop: the broker leaves).
    case disconnect(DisconnectHeader)
    /// A call to one of the service's methods.
    case call(ServiceCall)
    /// One step of a dispatch, handled in order with the bus events.
    case offer(DispatchOffer)
    /// A bus event sent again from the journal.
    case event(BusMessage)
    /// A lifecycle callback of a micro-app session this process hosts.
    case app(AppCallbackRequest)
    /// A start request to allow, change or refuse before it happens, and how long the broker waits
    /// for the answer.
    case intercept(AppStart, timeoutMilliseconds: Int? = nil)
    /// Run the start hook of the named service.
    case start(StartHeader)
    /// Run one boot task.
    case boot(BootTaskRun)

    /// DISCONNECT, saying why.
    package static func disconnect(reason: String) -> BrokerRequest {
        .disconnect(DisconnectHeader(reason: reason))
    }

    /// START of the service `name`.
    package static func start(name: String, timeoutMilliseconds: Int? = nil) -> BrokerRequest {
        .start(StartHeader(name: name, timeoutMilliseconds: timeoutMilliseconds))
    }

    /// What a request's `timeoutMs` may be: 1 ms to a day.
    package static let timeoutRange = 1...86_400_000

    /// How long the broker waits for the answer, where the request says: a service that stops
    /// waits no longer for the work answering it.
    package var timeoutMilliseconds: Int? {
        switch self {
        case .heartbeat, .disconnect, .event: nil
        case .call(let call): call.timeoutMilliseconds
        case .offer(let offer): offer.timeoutMilliseconds
        case .app(let callback): callback.timeoutMilliseconds
        case .intercept(_, let timeout): timeout
        case .start(let start): start.timeoutMilliseconds
        case .boot(let run): run.timeoutMilliseconds
        }
    }

    /// The command this request is sent as.
    public var command: Command {
        switch self {
        case .heartbeat: .heartbeat
        case .disconnect: .disconnect
        case .call: .call
        case .offer: .offer
        case .event: .event
        case .app: .app
        case .intercept: .intercept
        case .start: .start
        case .boot: .boot
        }
    }

    /// Reads a request a service received; the error names the field and what was wrong.
    public static func decode(_ request: ControlRequest) throws(ProtocolError) -> BrokerRequest {
        let fields = HeaderFields(request)
        switch request.command {
        case .heartbeat: return .heartbeat
        case .disconnect: return .disconnect(try DisconnectHeader(fields))
        case .call:
            var call = try ServiceCall(fields)
            call.body = request.payload ?? []
            return .call(call)
        case .offer: return .offer(try DispatchOffer(fields, payload: request.payload))
        case .event:
            var event = try JournalEvent(fields)
            event.message.payload = request.payload ?? []
            return .event(event.message)
        case .app: return .app(try AppCallbackRequest(fields, arguments: request.payload))
        case .intercept:
            let header = try InterceptHeader(fields)
            return .intercept(
                try AppStart(
                    app: header.app, mode: header.mode, params: header.params, clearTop: header.clearTop,
                    parent: header.parent, replacesRoot: false, fields),
                timeoutMilliseconds: header.timeoutMs)
        case .start: return .start(try StartHeader(fields))
        case .boot: return .boot(try BootTaskRun(fields))
        default: throw fields.problem("a client does not accept \(request.command)")
        }
    }

    /// The request on the wire with request id `id`: its frames, each header written from its one
    /// declaration (``HeaderMessage``) straight to bytes.
    public func frames(id: [UInt8] = []) -> [[UInt8]] {
        switch self {
        case .heartbeat: [ProtocolID.controlBytes, command.bytes, id, ClientRequest.emptyHeader]
        case .disconnect(let disconnect): disconnect.frames(id: id)
        case .call(let call): call.frames(id: id)
        case .offer(let offer): offer.frames(id: id, payload: offer.payloadText)
        case .event(let message): JournalEvent(message).frames(id: id, payload: message.payload)
        case .app(let callback): callback.frames(id: id, payload: JSONWriter.encode(callback.arguments))
        case .intercept(let start, let timeout):
            InterceptHeader(start, timeoutMilliseconds: timeout).frames(id: id)
        case .start(let start): start.frames(id: id)
        case .boot(let run): run.frames(id: id)
        }
    }

    /// The request as a service receives it, with request id `id` (its header as a tree: for tests
    /// and logs; ``frames(id:)`` is what is sent).
    public func controlRequest(id: [UInt8] = []) -> ControlRequest {
        ControlRequest(written: frames(id: id))
    }
}
