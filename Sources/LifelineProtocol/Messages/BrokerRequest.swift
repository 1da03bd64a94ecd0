/// A request the broker sends to a service or host: one case per command, each with its fields read
/// and checked. ``decode(_:)`` is the only reader of these headers and ``controlRequest(id:)`` the
/// only writer.
package enum BrokerRequest: Sendable, Equatable {
    /// The broker is alive; never answered.
    case heartbeat
    /// Forget your registration and start again with HELLO (or stop: the broker leaves).
    case disconnect(reason: String)
    /// A call to one of the service's methods.
    case call(ServiceCall)
    /// One step of a dispatch, handled in order with the bus events.
    case offer(DispatchOffer)
    /// A bus event sent again from the journal.
    case event(BusMessage)
    /// A lifecycle callback of a micro-app session this process hosts.
    case app(AppCallbackRequest)
    /// A start request to allow, change or refuse before it happens.
    case intercept(AppStart)
    /// Run the start hook of the named service.
    case start(name: String)
    /// Run one boot task.
    case boot(BootTaskRun)

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
        case .disconnect: return .disconnect(reason: try fields.optionalString("reason") ?? "no reason given")
        case .call:
            var call = try ServiceCall(fields)
            call.body = request.payload ?? []
            return .call(call)
        case .offer: return .offer(try DispatchOffer(fields, payload: request.payload))
        case .event: return .event(try JournalEvent.decode(fields, payload: request.payload))
        case .app: return .app(try AppCallbackRequest(fields, arguments: request.payload))
        case .intercept: return .intercept(try AppStart(fields, replacesRoot: false))
        case .start: return .start(name: try fields.string("name"))
        case .boot: return .boot(try BootTaskRun(fields))
        default: throw fields.problem("a client does not accept \(request.command)")
        }
    }

    /// The request on the wire, with request id `id`.
    public func controlRequest(id: [UInt8] = []) -> ControlRequest {
        switch self {
        case .heartbeat: ControlRequest(.heartbeat, requestID: id)
        case .disconnect(let reason):
            ControlRequest(.disconnect, requestID: id, header: ["reason": .string(reason)])
        case .call(let call): call.controlRequest(id: id, payload: call.body)
        case .offer(let offer): offer.controlRequest(id: id, payload: JSONWriter.encode(offer.payload))
        case .event(let message):
            ControlRequest(
                .event, requestID: id, header: JournalEvent.header(of: message), payload: message.payload)
        case .app(let callback):
            callback.controlRequest(id: id, payload: JSONWriter.encode(callback.arguments))
        case .intercept(let start):
            ControlRequest(
                .intercept, requestID: id,
                header: [
                    "app": .string(start.app), "params": start.params, "mode": .string(start.mode.rawValue),
                    "clearTop": .bool(start.clearTop), "parent": start.parent.map { .string($0) } ?? .null,
                ])
        case .start(let name): ControlRequest(.start, requestID: id, header: ["name": .string(name)])
        case .boot(let run): run.controlRequest(id: id)
        }
    }
}
