import LifelineProtocol
import LifelineSupport

/// Answers what the broker asks of a service process: calls, dispatch steps, start hooks, boot
/// tasks, micro-app callbacks and start interceptions; and hands bus events and gap notices to the
/// service's handlers. It only answers: connecting, the order of work and stopping belong to
/// ``ServiceRunner``.
struct ServiceResponder: Sendable {
    let service: Service
    /// The registered name (the service's own, or `--name`).
    let name: String
    let client: LifelineClient
    let context: ServiceContext
    let runtime: RuntimeServices
    /// What the handlers' queue dropped when they fell behind.
    let drops: DropCounter
    let handled: HandlerCounts
    let sessions: HostedSessions

    /// Answers a request that may run concurrently with others (everything but OFFER).
    func respond(to request: BrokerRequest, id: [UInt8]) async {
        let reply: ControlReply
        switch request {
        case .call(let call): reply = await answer(call, id: id)
        case .start(let target): reply = await start(target.name, id: id)
        case .boot(let run): reply = await runBootTask(run, id: id)
        case .app(let callback): reply = await hostCallback(callback, id: id)
        case .intercept(let start, _): reply = await intercept(start, id: id)
        case .offer(let offer): reply = await answer(offer, id: id)
        case .heartbeat, .disconnect, .event: return
        }
        client.answer(reply)
    }

    /// Handles the deliveries that must keep bus order — events, dispatch steps, gap notices — one
    /// at a time, until the queue finishes; tells `backpressure` (a service that resumes from a
    /// cursor) each time it took one.
    func consume(_ inbound: InboundQueue<ConnectionEvent>, backpressure: HandlerBackpressure? = nil) async {
        // The handler and counter of the last event's name: a batch is one name many times.
        var current: (name: EventName, handler: Service.Handler?, counter: HandlerCounts.Counter?)?
        while true {
            // Elements already waiting are taken without an `await` (each costs an executor check).
            let delivery: ConnectionEvent
            switch inbound.poll() {
            case .some(let element?): delivery = element
            case .some(nil): return
            case nil:
                guard let element = await inbound.next() else { return }
                delivery = element
            }
            backpressure?.took(from: inbound)
            if let notice = drops.takeNotice(limit: inbound.limit) {
                context.log("\(notice.reason)")
                for event in drops.takeUnacknowledged() {
                    client.acknowledge(
                        sequence: event.sequence, epoch: event.epoch,
                        error: "dropped: the handlers fell behind")
                }
                if let hook = service.gapHook { await hook(notice, context) }
            }
            switch delivery {
            case .event(let message, let receivedAt, let replayed):
                // Inline rather than a helper: one async frame per event less.
                if current?.name != message.name {
                    current = (
                        message.name, service.eventHandlers[message.name], handled.counter(for: message.name)
                    )
                }
                guard let handler = current?.handler else {
                    // Not subscribed here (a test may send one): acknowledged, so nobody waits.
                    Self.settle(
                        message, failure: nil, counter: nil, handled: handled, context: context,
                        client: client)
                    continue
                }
                var failure: (any Error)?
                do {
                    let event = Event(message, receivedAt: receivedAt, context: context, replayed: replayed)
                    if let immediate = handler.immediate {
                        try immediate(event)
                    } else {
                        _ = try await handler.run(event)
                    }
                } catch {
                    failure = error
                }
                Self.settle(
                    message, failure: failure, counter: current?.counter, handled: handled, context: context,
                    client: client)
            case .request(let request, let id): await respond(to: request, id: id)
            case .gap(let notice): if let hook = service.gapHook { await hook(notice, context) }
            default: break
            }
        }
    }

    /// After a bus event's handler ran: counts it, logs what it threw, and acknowledges the event
    /// when its publisher waits for that.
    /// A payload that did not decode counts as undecodable in `handled`, not as handled by `counter`.
    static func settle(
        _ message: BusMessage, failure: (any Error)?, counter: HandlerCounts.Counter?, handled: HandlerCounts,
        context: ServiceContext,
        client: LifelineClient
    ) {
        var counter = counter
        if let failure {
            // A warning, not news: a payload that did not decode, or a handler that threw.
            Console.log(
                context.serviceName,
                "handler for \(message.name) #\(message.header.sequence) failed: \(failure)",
                level: .warning)
            if handled.countIfUndecodable(failure) { counter = nil } else { handled.countFailed() }
        }
        counter?.increment()
        if message.header.flags & 1 == 1 {
            client.acknowledge(
                sequence: message.header.sequence, epoch: message.header.epoch, error: failure.map { "\($0)" }
            )
        }
    }

    /// Runs `body` and turns what it throws into an error reply: a ``ServiceError`` with its own
    /// status, anything else as 500 saying `what` failed.
    private func replying(_ id: [UInt8], _ what: String, _ body: () async throws -> JSONValue) async
        -> ControlReply
    {
        do {
            return ControlReply(requestID: id, json: try await body())
        } catch {
            return Self.reply(to: error, id: id, what)
        }
    }

    /// ``replying(_:_:_:)`` for a body that is JSON text already.
    private func replyingText(_ id: [UInt8], _ what: String, _ body: () async throws -> [UInt8]) async
        -> ControlReply
    {
        do {
            return ControlReply(requestID: id, status: .ok, body: try await body())
        } catch {
            return Self.reply(to: error, id: id, what)
        }
    }

    /// The error reply for what a handler threw: a ``ServiceError`` with its own status, anything
    /// else as 500 saying `what` failed.
    private static func reply(to error: any Error, id: [UInt8], _ what: String) -> ControlReply {
        if let error = error as? ServiceError {
            return ControlReply(requestID: id, status: error.status, body: error.body)
        }
        if let error = error as? PayloadDecodingError {
            return .error(.badRequest, "\(what): \(error)", requestID: id)
        }
        return .error(.internalError, "\(what): \(error)", requestID: id)
    }

    private func answer(_ offer: DispatchOffer, id: [UInt8]) async -> ControlReply {
        let received = SystemClock.monotonicNanoseconds()
        guard let handler = service.eventHandlers[offer.event] else {
            return ControlReply(requestID: id, status: .ok, body: Answer.continue.body)
        }
        return await replyingText(id, "\(name) failed to handle \(offer.event)") {
            let message = BusMessage(
                name: offer.event,
                header: BusHeader(
                    epoch: 0, sequence: 0, topicSequence: 0,
                    publishedWallNanoseconds: SystemClock.wallNanoseconds(),
                    publishedMonotonicNanoseconds: received),
                payload: offer.payloadText)
            let event = Event(
                message, receivedAt: received, context: context,
                dispatchID: offer.dispatch,
                stepTimeout: offer.timeoutMilliseconds)
            do {
                return try await handler.run(event).body
            } catch {
                handled.countIfUndecodable(error)
                throw error
            }
        }
    }

    /// START from the broker: the DTService start hook of `target` (this service or one registered at
    /// run time), then the answer.
    private func start(_ target: String, id: [UInt8]) async -> ControlReply {
        let added = target == name ? nil : runtime.service(named: target)
        let context =
            added == nil
            ? context : ServiceContext(serviceName: target, client: client, runtimeServices: runtime)
        do {
            try await (added ?? service).startHook?(context)
            return ControlReply(requestID: id, json: ["started": true])
        } catch {
            context.log("start failed: \(error)")
            return .error(.internalError, "\(target) failed to start: \(error)", requestID: id)
        }
    }

    /// A boot task the broker runs now: its condition, then its body (or the start hook).
    private func runBootTask(_ run: BootTaskRun, id: [UInt8]) async -> ControlReply {
        let boot = BootContext(task: run.task, launchOptions: run.launchOptions, service: context)
        let short = run.task.hasPrefix(name + ".") ? String(run.task.dropFirst(name.count + 1)) : run.task
        let handler = service.bootTasks[short]
        func skip(_ reason: String) -> ControlReply {
            ControlReply(requestID: id, status: .ok, body: BootTaskOutcome.skipped(reason: reason).bytes)
        }
        switch run.condition {
        case .environment(let variable, let expected)?:
            let value = Environment.variable(variable)
            if value == nil || (expected != nil && value != expected) {
                return skip(
                    "condition: environment \(variable)\(expected.map { " is not '\($0)'" } ?? " is not set")"
                )
            }
        case .check?:
            if let check = handler?.canExecute, await !check(boot) {
                return skip("condition: the service's own check said no")
            }
        default: break
        }
        return await replyingText(id, "\(run.task) failed") {
            if run.kind == .start {
                try await service.startHook?(context)
            } else {
                guard let handler else {
                    throw ServiceError(.notFound, "\(name) has no boot task \(run.task)")
                }
                try await handler.body(boot)
            }
            return BootTaskOutcome.done.bytes
        }
    }

    /// A micro-app callback for a session hosted here.
    private func hostCallback(_ callback: AppCallbackRequest, id: [UInt8]) async -> ControlReply {
        await replying(id, "\(callback.callback.rawValue) failed") { try await sessions.handle(callback) }
    }

    /// A start request to judge, when this service intercepts starts.
    private func intercept(_ start: AppStart, id: [UInt8]) async -> ControlReply {
        let request = StartRequest(
            app: start.app, params: start.params, mode: start.mode, clearTop: start.clearTop,
            parent: start.parent)
        let decision: StartDecision
        do {
            decision = try await service.interceptor?.handler(request, context) ?? .allow
        } catch {
            context.log("start interceptor failed (\(error)); allowing the start")
            decision = .allow
        }
        return ControlReply(requestID: id, status: .ok, body: decision.bytes)
    }

    /// A call to one of the methods of this service or of one it registered at run time.
    private func answer(_ call: ServiceCall, id: [UInt8]) async -> ControlReply {
        switch resolve(call, id: id) {
        case .failure(let refusal): return refusal.reply
        case .success(let target): return await answer(PendingCall(call: call, target: target), id: id)
        }
    }

    /// Runs the method `pending` reaches and answers its call.
    func respond(to pending: PendingCall, id: [UInt8]) async {
        client.answer(await answer(pending, id: id))
    }

    /// The answer of the method `pending` reaches.
    private func answer(_ pending: PendingCall, id: [UInt8]) async -> ControlReply {
        let (call, target) = (pending.call, pending.target)
        let request: CallRequest
        switch self.request(for: call, to: target, id: id) {
        case .failure(let refusal): return refusal.reply
        case .success(let made): request = made
        }
        if let text = target.method.text {
            do {
                return ControlReply(requestID: id, status: .ok, body: try await text(request))
            } catch {
                return Self.reply(to: error, id: id, target.failure)
            }
        }
        return await replying(id, target.failure) { try await target.method.run(request) }
    }

    /// What the socket thread does with a call: send its answer now, or run its method in a task.
    enum CallAnswer {
        /// The method is inline, or the call is refused: the reply to send at once.
        case now(ControlReply)
        /// The method runs in a task (``respond(to:id:)``); its body is not parsed here.
        case later(PendingCall)
    }

    /// A call whose method has been found, to be run in a task.
    struct PendingCall: Sendable {
        let call: ServiceCall
        fileprivate let target: Target
    }

    /// The answer to `call` when it is given on the socket thread — the method is inline, or the call
    /// is refused — for that thread to send at once; else the method it reaches, to run in a task.
    /// `watch` learns which inline method runs.
    func answerNow(_ call: ServiceCall, id: [UInt8], watch: InlineWatch) -> CallAnswer {
        let target: Target
        switch resolve(call, id: id) {
        case .failure(let refusal): return .now(refusal.reply)
        case .success(let resolved): target = resolved
        }
        guard let immediate = target.method.immediate else {
            return .later(PendingCall(call: call, target: target))
        }
        switch request(for: call, to: target, id: id) {
        case .failure(let refusal): return .now(refusal.reply)
        case .success(let request):
            do {
                let answer = try watch.run(
                    .method(service: target.name, method: call.method), log: target.context.log
                ) {
                    try immediate(request)
                }
                return .now(ControlReply(requestID: id, json: answer))
            } catch {
                return .now(Self.reply(to: error, id: id, target.failure))
            }
        }
    }

    /// A refused call's reply.
    private struct Refusal: Error { let reply: ControlReply }

    /// The method a call reaches, the context it runs in, and what to say if it fails.
    fileprivate struct Target: Sendable {
        let method: Service.Method
        let name: String
        let context: ServiceContext
        /// What an error reply says failed (`service.method failed`).
        let failure: String
    }

    /// The method `call` asks for (of this service or one registered at run time), or the refusal.
    private func resolve(_ call: ServiceCall, id: [UInt8]) -> Result<Target, Refusal> {
        var (service, name, context) = (self.service, self.name, self.context)
        if call.service != name {
            guard let added = runtime.service(named: call.service) else {
                return .failure(
                    Refusal(
                        reply: .error(
                            .notFound, "this process serves no service '\(call.service)'", requestID: id)))
            }
            (service, name) = (added, call.service)
            context = ServiceContext(serviceName: call.service, client: client, runtimeServices: runtime)
        }
        guard let method = service.methodHandlers[call.method] else {
            return .failure(
                Refusal(
                    reply: .error(
                        .notFound, "service '\(name)' has no method '\(call.method)'", requestID: id)))
        }
        return .success(
            Target(method: method, name: name, context: context, failure: "\(name).\(call.method) failed"))
    }

    /// The request the method gets, or the refusal when its body is not JSON. An untyped method's
    /// body is parsed here, once (the parse is the check); a typed one's is only checked, and
    /// decoded from its text by the method.
    private func request(for call: ServiceCall, to target: Target, id: [UInt8]) -> Result<
        CallRequest, Refusal
    > {
        var tree: JSONValue?
        do {
            if call.body.isEmpty {
                tree = .null
            } else if target.method.text == nil {
                tree = try JSONParser.parse(call.body)
            } else if (try? JSONValidator.topLevelType(of: call.body)) == nil {
                _ = try JSONParser.parse(call.body)
            }
        } catch {
            return .failure(
                Refusal(
                    reply: .error(
                        .badRequest, "the body of \(target.name).\(call.method) is not JSON: \(error)",
                        requestID: id)))
        }
        return .success(
            CallRequest(
                method: call.method, key: call.key, text: call.body, tree: tree,
                timeout: .milliseconds(call.timeoutMilliseconds ?? 0), context: target.context))
    }
}
