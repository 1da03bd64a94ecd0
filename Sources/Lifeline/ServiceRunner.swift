import Glibc
import LifelineProtocol
import Synchronization

/// Runs a ``Service``: didCreate, connect and register, deliver events in order and calls
/// concurrently, start after the first registration, and on ``stop()`` willDestroy, unregister, close.
public final class ServiceRunner: Sendable {
    public let service: Service
    public let options: ServiceOptions
    private let state = Mutex<(client: LifelineClient?, stopping: Bool)>((nil, false))

    public init(_ service: Service, options: ServiceOptions = ServiceOptions()) {
        self.service = service
        self.options = options
    }

    /// The registered name (the service's own, or `--name`).
    public var name: String { options.name ?? service.name }

    /// Serves until ``stop()``; throws when the broker refuses the name.
    public func run() async throws {
        let name = self.name
        let registration = ServiceRegistration(
            name: name, instance: Environment.uniqueToken(), pid: Environment.processID, host: Environment.hostName,
            events: service.events, methods: service.methods, heartbeat: options.heartbeat ?? service.heartbeat,
            attachToken: "")
        var configuration = SessionConfiguration(
            brokerEndpoint: options.broker, registration: registration, subscriptions: .events(service.events),
            token: registration.instance)
        configuration.registration?.attachToken = registration.instance

        let (events, eventSink) = AsyncStream<(BusMessage, UInt64)>.makeStream()
        let (control, controlSink) = AsyncStream<ConnectionThread.Delivery>.makeStream()
        let client = LifelineClient(configuration: configuration) { delivery in
            if case .event(let message, let receivedAt) = delivery {
                eventSink.yield((message, receivedAt))
            } else {
                controlSink.yield(delivery)
            }
        }
        let context = ServiceContext(serviceName: name, client: client)
        if let hook = service.didCreateHook { try await hook(context) }
        let stopRequested = state.withLock { state in
            state.client = client
            return state.stopping
        }
        if stopRequested { await leave(client, context: context) }

        // Handlers run on the socket thread (see SocketThreadExecutor): no thread hop before a handler.
        let eventLoop = Task(executorPreference: client.socketExecutor) { await self.deliverEvents(events, context: context) }
        defer { eventSink.finish() }
        var refusal: LifelineError?
        for await delivery in control {
            switch delivery {
            case .request(let request): Task { await answer(request, client: client, context: context) }
            case .joined(let epoch, let first):
                if first {
                    Console.out("READY service=\(name) pid=\(Environment.processID) epoch=\(epoch)")
                    if let hook = service.startHook {
                        Task {
                            do { try await hook(context) } catch { context.log("start failed: \(error)") }
                        }
                    }
                } else {
                    context.log("registered again with the broker (epoch \(epoch))")
                }
            case .refused(let error):
                refusal = error
                controlSink.finish()
            case .log(let line): context.log(line)
            case .finished: controlSink.finish()
            case .event, .completion: break
            }
        }
        eventSink.finish()
        await eventLoop.value
        if let refusal { throw refusal }
    }

    /// Asks the service to stop: willDestroy, unregister, close. Safe to call more than once.
    public func stop() {
        let (client, first) = state.withLock { state in
            defer { state.stopping = true }
            return (state.client, !state.stopping)
        }
        guard first, let client else { return }
        let context = ServiceContext(serviceName: name, client: client)
        Task { await leave(client, context: context) }
    }

    private func leave(_ client: LifelineClient, context: ServiceContext) async {
        if let hook = service.willDestroyHook {
            do { try await hook(context) } catch { context.log("willDestroy failed: \(error)") }
        }
        await client.close()
    }

    private func deliverEvents(_ events: AsyncStream<(BusMessage, UInt64)>, context: ServiceContext) async {
        for await (message, receivedAt) in events {
            guard let handler = service.eventHandlers[message.name] else { continue }
            let payload: JSONValue
            do {
                payload = try JSONParser.parse(message.payload)
            } catch {
                context.log("ignored \(message.name) #\(message.header.sequence): payload is not JSON (\(error))")
                continue
            }
            do {
                try await handler(Event(message, payload: payload, receivedAt: receivedAt, context: context))
            } catch {
                context.log("handler for \(message.name) #\(message.header.sequence) failed: \(error)")
            }
        }
    }

    private func answer(_ request: ControlRequest, client: LifelineClient, context: ServiceContext) async {
        let id = request.requestID
        let method = request.header["method"]?.stringValue ?? ""
        guard let handler = service.methodHandlers[method] else {
            client.answer(.error(.notFound, "service '\(name)' has no method '\(method)'", requestID: id))
            return
        }
        let body: JSONValue
        do {
            body = (request.payload ?? []).isEmpty ? .null : try JSONParser.parse(request.payload ?? [])
        } catch {
            client.answer(.error(.badRequest, "the body of \(name).\(method) is not JSON: \(error)", requestID: id))
            return
        }
        let call = CallRequest(
            method: method, body: body, timeoutMilliseconds: Int(request.header["timeoutMs"]?.intValue ?? 0), context: context)
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
    public func main(arguments: CommandLineArguments = .process, about: String = "", usage extraUsage: String = "") async -> Never {
        var arguments = arguments
        let executable = CommandLine.arguments.first.map { String($0.split(separator: "/").last ?? "") } ?? name
        if arguments.flag("-h", "--help") {
            Console.out("usage: \(executable) [options]\(about.isEmpty ? "" : "\n\n" + about)\n\noptions:\n\(extraUsage)\(ServiceOptions.usage)")
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
