import Glibc
import LifelineProtocol
import LifelineSupport
import Synchronization

/// Runs a ``Service``: didCreate, connect and register, deliver events in order and calls
/// concurrently, start after the first registration, and on ``stop()`` willDestroy, unregister, close.
public final class ServiceRunner: Sendable {
    public let service: Service
    public let options: ServiceOptions
    private let state = Mutex<(context: ServiceContext?, stopping: Bool)>((nil, false))

    public init(_ service: Service, options: ServiceOptions = ServiceOptions()) {
        self.service = service
        self.options = options
    }

    /// The registered name (the service's own, or `--name`).
    public var name: String { options.name ?? service.name }

    /// What reaches the event-handling task, in order.
    enum Inbound: Sendable {
        case event(BusMessage, receivedAt: UInt64, replayed: Bool)
        case offer(ControlRequest)
        case gap(GapNotice)
    }

    /// Serves until ``stop()``; throws when the broker refuses the name.
    public func run() async throws {
        let name = self.name
        let instance = Environment.uniqueToken()
        let registration = ServiceRegistration(
            name: name, instance: instance, pid: Environment.processID, host: Environment.hostName,
            events: service.events,
            methods: service.methods, heartbeat: options.heartbeat ?? service.heartbeat,
            attachToken: instance,
            priorities: service.priorities, deadlines: service.deadlines, apps: service.apps,
            lazy: service.isLazy,
            interceptorPriority: service.interceptor?.priority, bootTasks: service.bootDeclarations(as: name))
        var configuration = ConnectionConfiguration(
            brokerEndpoint: options.broker, registration: registration,
            subscriptions: .events(service.events), token: instance)

        let inbound = InboundQueue<Inbound>()
        let (control, controlSink) = AsyncStream<ConnectionThread.Delivery>.makeStream()
        if let hook = service.resumeHook { configuration.resume = try await hook() }

        let client = LifelineClient(configuration: configuration) { delivery in
            switch delivery {
            case .event(let message, let receivedAt, let replayed):
                inbound.push(.event(message, receivedAt: receivedAt, replayed: replayed))
            case .offer(let request): inbound.push(.offer(request))
            case .gap(let notice): inbound.push(.gap(notice))
            default: controlSink.yield(delivery)
            }
        }
        let runtime = RuntimeServices(mainName: name, template: registration)
        let context = ServiceContext(serviceName: name, client: client, runtimeServices: runtime)
        let hosted = HostedSessions(factories: service.appFactories, context: context)
        let stopRequested = state.withLock { state in
            state.context = context
            return state.stopping
        }
        if stopRequested { Task { await leave(context) } }

        // Handlers run on the socket thread (see SocketThreadExecutor): no thread hop before a handler.
        let eventLoop = Task(executorPreference: client.socketExecutor) {
            await self.handle(inbound, client: client, context: context)
        }
        defer { inbound.finish() }
        var refusal: LifelineError?
        for await delivery in control {
            switch delivery {
            case .request(let request):
                switch request.command {
                case .app: Task { await hostCallback(request, sessions: hosted, client: client) }
                case .intercept: Task { await intercept(request, client: client, context: context) }
                case .start:
                    Task { await startHook(request, client: client, context: context, runtime: runtime) }
                case .boot: Task { await runBootTask(request, client: client, context: context) }
                default: Task { await answer(request, client: client, context: context, runtime: runtime) }
                }
            case .joined(let epoch, let first, let sequence, let lifecycle):
                if first {
                    if let hook = service.didCreateHook {
                        do { try await hook() } catch { context.log("didCreate failed: \(error)") }
                    }
                    Console.out(
                        "READY service=\(name) pid=\(Environment.processID) epoch=\(epoch) sequence=\(sequence) lifecycle=\(lifecycle)"
                    )
                } else {
                    context.log("registered again with the broker (epoch \(epoch))")
                    Task {
                        for (service, error) in await runtime.registerAgain(client: client) {
                            context.log("could not register \(service) again: \(error)")
                        }
                    }
                }
            case .refused(let error):
                refusal = error
                controlSink.finish()
            case .log(let line): context.log(line)
            case .finished: controlSink.finish()
            case .event, .offer, .gap, .completion: break
            }
        }
        inbound.finish()
        await eventLoop.value
        if let refusal { throw refusal }
    }

    /// Asks the service to stop: willDestroy, unregister, close. Safe to call more than once.
    public func stop() {
        let (context, first) = state.withLock { state in
            defer { state.stopping = true }
            return (state.context, !state.stopping)
        }
        guard first, let context else { return }
        Task { await leave(context) }
    }

    /// Services registered at run time leave first (their willDestroy, UNREGISTER), then this one.
    private func leave(_ context: ServiceContext) async {
        for name in (context.runtimeServices?.all.keys).map(Array.init)?.sorted() ?? [] {
            do { try await context.unregisterService(name) } catch {
                context.log("could not unregister \(name): \(error)")
            }
        }
        if let hook = service.willDestroyHook {
            do { try await hook(context) } catch { context.log("willDestroy failed: \(error)") }
        }
        await context.client.close()
    }

    /// Handles events, dispatch steps and gap notices one at a time, in the order they arrived.
    private func handle(_ inbound: InboundQueue<Inbound>, client: LifelineClient, context: ServiceContext)
        async
    {
        while let item = await inbound.next() {
            switch item {
            case .event(let message, let receivedAt, let replayed):
                await handleEvent(
                    message, receivedAt: receivedAt, replayed: replayed, client: client, context: context)
            case .offer(let request): await handleOffer(request, client: client, context: context)
            case .gap(let notice):
                if let hook = service.gapHook { await hook(notice, context) }
            }
        }
    }

    private func handleEvent(
        _ message: BusMessage, receivedAt: UInt64, replayed: Bool, client: LifelineClient,
        context: ServiceContext
    ) async {
        let wantsAcknowledgement = message.header.flags & 1 == 1
        guard let handler = service.eventHandlers[message.name] else { return }
        var failure: String?
        do {
            let payload = try JSONParser.parse(message.payload)
            _ = try await handler.run(
                Event(message, payload: payload, receivedAt: receivedAt, context: context, replayed: replayed)
            )
        } catch {
            failure = "\(error)"
            context.log("handler for \(message.name) #\(message.header.sequence) failed: \(error)")
        }
        if wantsAcknowledgement {
            client.acknowledge(sequence: message.header.sequence, epoch: message.header.epoch, error: failure)
        }
    }

    private func handleOffer(_ request: ControlRequest, client: LifelineClient, context: ServiceContext) async
    {
        let received = SystemClock.monotonicNanoseconds()
        let name = EventName(rawValue: request.header["event"]?.stringValue ?? "")
        guard let handler = service.eventHandlers[name] else {
            client.answer(ControlReply(requestID: request.requestID, json: Answer.continue.json))
            return
        }
        do {
            let payload =
                (request.payload ?? []).isEmpty
                ? JSONValue.emptyObject : try JSONParser.parse(request.payload ?? [])
            let message = BusMessage(
                name: name,
                header: BusHeader(
                    epoch: 0, sequence: 0, topicSequence: 0,
                    publishedWallNanoseconds: SystemClock.wallNanoseconds(),
                    publishedMonotonicNanoseconds: received),
                payload: [])
            let event = Event(
                message, payload: payload, receivedAt: received, context: context,
                dispatchID: request.header["dispatch"]?.intValue.map { UInt64($0) },
                stepTimeout: request.header["timeoutMs"]?.intValue.map { Int($0) })
            let answer = try await handler.run(event)
            client.answer(ControlReply(requestID: request.requestID, json: answer.json))
        } catch let error as ServiceError {
            client.answer(ControlReply(requestID: request.requestID, status: error.status, json: error.body))
        } catch {
            client.answer(
                .error(
                    .internalError, "\(self.name) failed to handle \(name): \(error)",
                    requestID: request.requestID))
        }
    }

    /// START from the broker: the DTService start hook, then the answer.
    private func startHook(
        _ request: ControlRequest, client: LifelineClient, context: ServiceContext, runtime: RuntimeServices
    ) async {
        let target = request.header["name"]?.stringValue ?? name
        let added = target == name ? nil : runtime.service(named: target)
        let context =
            added == nil
            ? context : ServiceContext(serviceName: target, client: client, runtimeServices: runtime)
        do {
            try await (added ?? service).startHook?(context)
            client.answer(ControlReply(requestID: request.requestID, json: ["started": true]))
        } catch {
            context.log("start failed: \(error)")
            client.answer(
                .error(.internalError, "\(target) failed to start: \(error)", requestID: request.requestID))
        }
    }

    /// A boot task the broker runs now: its condition, then its body (or the start hook).
    private func runBootTask(_ request: ControlRequest, client: LifelineClient, context: ServiceContext) async
    {
        let id = request.requestID
        let name = request.header["task"]?.stringValue ?? ""
        let boot = BootContext(
            task: name, launchOptions: request.header["launchOptions"] ?? .emptyObject, service: context)
        let short = name.hasPrefix(self.name + ".") ? String(name.dropFirst(self.name.count + 1)) : name
        let handler = service.bootTasks[short]
        func skip(_ reason: String) {
            client.answer(
                ControlReply(requestID: id, json: ["outcome": "skipped", "reason": .string(reason)]))
        }
        switch request.header["condition"].flatMap(BootCondition.init(json:)) {
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
        do {
            if request.header["kind"]?.stringValue == "start" {
                try await service.startHook?(context)
            } else {
                guard let handler else {
                    throw ServiceError(.notFound, "\(self.name) has no boot task \(name)")
                }
                try await handler.body(boot)
            }
            client.answer(ControlReply(requestID: id, json: ["outcome": "done"]))
        } catch let error as ServiceError {
            client.answer(ControlReply(requestID: id, status: error.status, json: error.body))
        } catch {
            client.answer(.error(.internalError, "\(name) failed: \(error)", requestID: id))
        }
    }

    /// A micro-app callback for a session hosted here.
    private func hostCallback(_ request: ControlRequest, sessions: HostedSessions, client: LifelineClient)
        async
    {
        let callback = request.header["callback"]?.stringValue ?? ""
        do {
            let arguments =
                (request.payload ?? []).isEmpty
                ? JSONValue.emptyObject : try JSONParser.parse(request.payload ?? [])
            let body = try await sessions.handle(
                callback: callback, header: request.header, arguments: arguments)
            client.answer(ControlReply(requestID: request.requestID, json: body))
        } catch let error as ServiceError {
            client.answer(ControlReply(requestID: request.requestID, status: error.status, json: error.body))
        } catch {
            client.answer(
                .error(.internalError, "\(callback) failed: \(error)", requestID: request.requestID))
        }
    }

    /// A start request to judge, when this service intercepts starts.
    private func intercept(_ request: ControlRequest, client: LifelineClient, context: ServiceContext) async {
        let header = request.header
        let start = StartRequest(
            app: header["app"]?.stringValue ?? "", params: header["params"] ?? .emptyObject,
            mode: header["mode"]?.stringValue.flatMap(LaunchMode.init(rawValue:)) ?? .pushWithAnimation,
            clearTop: header["clearTop"]?.boolValue ?? false, parent: header["parent"]?.stringValue)
        let decision: StartDecision
        do {
            decision = try await service.interceptor?.handler(start, context) ?? .allow
        } catch {
            context.log("start interceptor failed (\(error)); allowing the start")
            decision = .allow
        }
        client.answer(ControlReply(requestID: request.requestID, json: decision.json))
    }

    private func answer(
        _ request: ControlRequest, client: LifelineClient, context: ServiceContext, runtime: RuntimeServices
    ) async {
        let id = request.requestID
        let method = request.header["method"]?.stringValue ?? ""
        let target = request.header["service"]?.stringValue ?? self.name
        var service = self.service
        var context = context
        var name = self.name
        if target != name {
            guard let added = runtime.service(named: target) else {
                client.answer(.error(.notFound, "this process serves no service '\(target)'", requestID: id))
                return
            }
            (service, name) = (added, target)
            context = ServiceContext(serviceName: target, client: client, runtimeServices: runtime)
        }
        guard let handler = service.methodHandlers[method] else {
            client.answer(.error(.notFound, "service '\(name)' has no method '\(method)'", requestID: id))
            return
        }
        let body: JSONValue
        do {
            body = (request.payload ?? []).isEmpty ? .null : try JSONParser.parse(request.payload ?? [])
        } catch {
            client.answer(
                .error(.badRequest, "the body of \(name).\(method) is not JSON: \(error)", requestID: id))
            return
        }
        let call = CallRequest(
            method: method, body: body, timeoutMilliseconds: Int(request.header["timeoutMs"]?.intValue ?? 0),
            context: context)
        do {
            client.answer(ControlReply(requestID: id, json: try await handler(call)))
        } catch let error as ServiceError {
            client.answer(ControlReply(requestID: id, status: error.status, json: error.body))
        } catch {
            client.answer(.error(.internalError, "\(name).\(method) failed: \(error)", requestID: id))
        }
    }
}

extension Service {
    /// Runs the service as the main program: reads the standard options (``ServiceOptions``), stops
    /// gracefully on SIGINT / SIGTERM and exits 0; exits 1 when the broker refuses the service and 2
    /// on a bad command line.
    public func main(
        arguments: CommandLineArguments = .process, about: String = "", usage extraUsage: String = ""
    ) async -> Never {
        var arguments = arguments
        let executable =
            CommandLine.arguments.first.map { String($0.split(separator: "/").last ?? "") } ?? name
        if arguments.flag("-h", "--help") {
            Console.out(
                "usage: \(executable) [options]\(about.isEmpty ? "" : "\n\n" + about)\n\noptions:\n\(extraUsage)\(ServiceOptions.usage)"
            )
            exit(0)
        }
        let options: ServiceOptions
        do {
            options = try ServiceOptions(parsing: &arguments)
            try arguments.finish()
        } catch {
            Console.error("\(executable): \(error.message)\ntry '\(executable) --help'")
            exit(2)
        }
        let runner = ServiceRunner(self, options: options)
        let watcher = SignalWatcher { _ in runner.stop() }
        do {
            try await runner.run()
            withExtendedLifetime(watcher) {}
            exit(0)
        } catch {
            Console.log(runner.name, "\(error)")
            exit(1)
        }
    }
}
