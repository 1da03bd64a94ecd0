import Glibc
import LifelineProtocol
import LifelineSupport
import Synchronization

/// Runs a ``Service``: didCreate, connect and register, deliver events in order and calls
/// concurrently, start after the first registration, and on ``stop()`` willDestroy, unregister, close.
///
/// Everything it starts runs in one discarding task group — the ordered handler loop (on the
/// service's handler thread, `ll-handlers`), the re-registration of run-time services, and the
/// leaving sequence — so nothing finished stays behind (a plain task group keeps every finished
/// child until it is awaited: a long-lived service would grow with its calls, and measured ~40 µs
/// slower per call here). Requests run in tasks of their own — calls started by the socket thread
/// (``ImmediateDelivery``), start hooks, boot tasks and app callbacks by the runner — counted by
/// ``RequestsInFlight``; ``run()`` returns when the connection has closed, every child has ended
/// and every request has been answered or is past the deadline its sender waits for (and a second).
public final class ServiceRunner: Sendable {
    /// Makes the connection a runner talks through, given where its deliveries go.
    typealias Connect =
        @Sendable (ConnectionConfiguration, PendingReplies, @escaping @Sendable (ConnectionEvent) -> Void) ->
        any Connection

    public let service: Service
    public let options: ServiceRunner.Options
    /// How far ``run()`` has come.
    package let phase = RunnerPhase()
    private let connect: Connect
    private let registered = Mutex<ServiceRegistration?>(nil)

    /// What the runner registers with the broker, once ``run()`` has built it.
    package var registration: ServiceRegistration? { registered.withLock { $0 } }
    private let stops: (stream: AsyncStream<Void>, continuation: AsyncStream<Void>.Continuation)

    public convenience init(_ service: Service, options: ServiceRunner.Options = ServiceRunner.Options()) {
        self.init(service, options: options) { configuration, pending, deliver in
            ConnectionThread(
                configuration: configuration, name: "ll-socket", pending: pending, deliver: deliver)
        }
    }

    /// A runner over the connection `connect` makes (an ``InMemoryConnection`` in tests).
    init(_ service: Service, options: ServiceRunner.Options, connect: @escaping Connect) {
        self.service = service
        self.options = options
        self.connect = connect
        self.stops = AsyncStream<Void>.makeStream(bufferingPolicy: .bufferingNewest(1))
    }

    /// A runner whose connection is in memory: the returned connection plays the broker
    /// (LifelineTesting's ``ServiceTestHost``).
    package static func inMemory(_ service: Service, name: String?) -> (ServiceRunner, InMemoryConnection) {
        let connection = InMemoryConnection()
        var options = ServiceRunner.Options()
        options.name = name
        options.credentials = nil
        // No broker is reached: whatever $LIFELINE_BROKER says does not matter here.
        options.broker = "inproc://lifeline-test-host"
        let runner = ServiceRunner(service, options: options) { _, pending, sink in
            connection.attach(pending, sink)
            return connection
        }
        return (runner, connection)
    }

    /// The registered name (the service's own, or `--name`).
    public var name: String { options.name ?? service.name }

    /// Asks the service to stop: willDestroy, unregister, close. Safe to call more than once, and
    /// before ``run()`` has connected.
    public func stop() { stops.continuation.yield() }

    /// Serves until ``stop()`` — or until the calling task is cancelled, which leaves the same way
    /// (willDestroy, unregister, handlers drained, close), as a service lifecycle group stops its
    /// services; throws when the broker refuses the name.
    /// - Throws: ``LifelineError`` when the broker refuses the registration (`.conflict`: the name is taken; `.forbidden`: the policy), `.invalid` for a service put together wrongly (its problems named: a bad name or broker address, an event without a namespace, a method declared twice, an actor's clashing method names, an actor made outside its factory) or a registration the broker refuses as invalid, or what the resume hook threw.
    public func run() async throws {
        // A service whose stdout or stderr pipe closes (its supervisor was killed) goes on: a write
        // fails instead of the process dying.
        signal(SIGPIPE, SIG_IGN)
        // The service runs in a task of its own, which the caller's cancellation does not reach:
        // leaving needs requests (UNREGISTER) that a cancelled task could not make.
        let serving = Task { try await self.serve() }
        try await withTaskCancellationHandler {
            try await serving.value
        } onCancel: {
            self.stop()
        }
    }

    private func serve() async throws {
        defer { phase.advance(to: .ended) }
        let name = self.name
        if let problem = ServiceRegistration.nameProblem(name, what: "the service name") {
            throw LifelineError(.badRequest, problem)
        }
        if let problem = Endpoint.problem(inList: options.broker) {
            throw LifelineError(.badRequest, "the broker's address: \(problem)")
        }
        try service.checkConfiguration()
        let instance = Environment.uniqueToken()
        var registration = ServiceRegistration(
            name: name, instance: instance, pid: Environment.processID, host: Environment.hostName,
            events: service.events, methods: service.methods,
            heartbeat: options.heartbeat ?? service.heartbeat,
            attachToken: instance, priorities: service.priorities, deadlines: service.deadlines,
            apps: service.apps,
            lazy: service.isLazy, interceptorPriority: service.interceptor?.priority,
            bootTasks: service.bootDeclarations(as: name))
        registration.description = await service.describedWithActor()
        registration.replicable = service.isReplicable
        registration.idempotent = service.idempotentMethods.sorted()
        registration.shared = service.sharedEvents.sorted { $0.rawValue < $1.rawValue }
        registration.keyedMethods = service.keyedMethods
        registered.withLock { [registration] in $0 = registration }
        let drops = DropCounter()
        var configuration = ConnectionConfiguration(
            brokerEndpoint: options.broker, registration: registration,
            subscriptions: .events(service.events.filter { !service.sharedEvents.contains($0) }),
            token: instance)
        configuration.credentials = options.credentials
        configuration.droppedEvents = { drops.dropped }
        let contact = BrokerContact()
        configuration.contact = contact
        // Set once the context exists (below), before the connection first registers.
        let heldKeys = HeldKeysSource()
        configuration.heldKeys = { heldKeys.keys() }
        let handled = HandlerCounts(events: service.events)
        if let hook = service.resumeHook { configuration.resume = try await hook() }

        let inbound = InboundQueue<ConnectionEvent>(limit: options.inboundLimit) { delivery in
            if case .event = delivery { true } else { false }
        }
        configuration.handlerReport = {
            (UInt64(inbound.count), handled.snapshot, handled.undecodable, handled.failed)
        }
        let immediate = ImmediateDelivery(service: service, handled: handled, drops: drops, inbound: inbound)
        if immediate.handlesEvents {
            configuration.deliverInline = { run, receivedAt in
                immediate.deliver(run: run, receivedAt: receivedAt)
            }
        }
        // A service that resumes from a cursor loses nothing when its handlers fall behind.
        let backpressure = service.resumeHook == nil ? nil : HandlerBackpressure()
        let (control, controlSink) = AsyncStream<ConnectionEvent>.makeStream()
        let connect = self.connect
        let client = LifelineClient(brokerEndpoint: configuration.brokerEndpoint) { event in
            if event.isOrdered {
                if case .event(let message, let receivedAt, let replayed) = event,
                    immediate.deliver(message, receivedAt: receivedAt, replayed: replayed)
                {
                    return
                }
                if let backpressure {
                    // A shared event (sent to this instance alone, acknowledged) is never refused.
                    if case .event(let message, _, _) = event, message.header.flags & 3 != 3 {
                        _ = backpressure.offer(event, message, to: inbound)
                    } else {
                        _ = inbound.pushWithoutDropping(event, onlyIfRoom: false)
                    }
                    return
                }
                if case .event(let message, _, _)? = inbound.push(event) { drops.record(message) }
            } else if case .request(let request, let id) = event, immediate.answer(request, id: id) {
                return
            } else {
                controlSink.yield(event)
            }
        } connect: { [configuration] pending, deliver in
            connect(configuration, pending, deliver)
        }
        backpressure?.attach { [weak client] command in client?.tell(command) }
        phase.advance(to: .connected)
        let runtime = RuntimeServices(mainName: name, template: registration)
        let context = ServiceContext(serviceName: name, client: client, runtimeServices: runtime)
        // The actor exists before the broker can route a call to it, and goes when the runner ends.
        if let hosted = service.hostedActor {
            do { try hosted.start(context, as: name) } catch {
                await client.close()
                throw error
            }
            for note in service.hostingNotes { context.log(note) }
        }
        defer { service.hostedActor?.stop(context, as: name) }
        if let keyed = service.keyedActors {
            keyed.start(context, as: name, contact: contact, heartbeat: registration.heartbeat)
            heldKeys.set { keyed.heldKeys(context, as: name) }
        }
        let responder = ServiceResponder(
            service: service, name: name, client: client, context: context, runtime: runtime, drops: drops,
            handled: handled,
            sessions: HostedSessions(
                factories: service.appFactories, actions: service.appActions, context: context))

        var refusal: LifelineError?
        let interval = Duration.milliseconds(registration.heartbeat.intervalMilliseconds)
        let watchdog = Task { [watch = immediate.watch] in
            while !Task.isCancelled {
                // How often a blocked socket thread is looked for.
                try? await Task.sleep(for: max(interval / 4, .milliseconds(10)))
                if let late = watch.overdue(after: interval) {
                    Console.log(
                        name,
                        "\(late.what) has held the socket thread for \(late.milliseconds) ms: heartbeats, calls and events wait for it (the broker drops a service silent for \(registration.heartbeat.intervalMilliseconds * registration.heartbeat.liveness) ms); give slow work to .on (the service's handler thread) or .method (a method that holds the socket thread has the loop moved to another one)",
                        level: .warning)
                }
            }
        }
        defer { watchdog.cancel() }
        let handlerThread = HandlerThread(name: "ll-handlers")
        defer { handlerThread.close() }
        // Event handlers run on the service's handler thread (one task consumes them: bus order);
        // calls in tasks that prefer the socket thread (started by `immediate`, see
        // `SocketExecutor`), hooks on the Swift pool; inline handlers inside the delivery.
        do {
            await withDiscardingTaskGroup { group in
                group.addTask { [stops] in
                    for await _ in stops.stream {
                        await self.leave(context)
                        return
                    }
                }
                for await event in control {
                    switch event {
                    case .request(let request, let id):
                        // Counted with the socket thread's calls: a stop waits for a call, a start
                        // hook, a boot task or an app callback only while the broker does.
                        immediate.requests.track(
                            timeoutMilliseconds: request.timeoutMilliseconds
                                ?? ImmediateDelivery.defaultRequestTimeout, executor: nil
                        ) { await responder.respond(to: request, id: id) }
                    case .joined(let epoch, let first, let sequence, let lifecycle):
                        if first {
                            if let hook = service.didCreateHook {
                                do { try await hook() } catch { context.log("didCreate failed: \(error)") }
                            }
                            // Only now do events and offers reach the handlers (queued until
                            // then), inline or on the pool: nothing is handled before didCreate
                            // has returned. Calls wait too: this loop starts them.
                            group.addTask(executorPreference: handlerThread) {
                                await responder.consume(inbound, backpressure: backpressure)
                            }
                            immediate.attach(responder)
                            self.phase.advance(to: .serving)
                            Console.out(
                                "READY service=\(name) pid=\(Environment.processID) epoch=\(epoch) sequence=\(sequence) lifecycle=\(lifecycle)"
                            )
                            SystemdNotifier.notify("READY=1\nSTATUS=registered as \(name)")
                        } else {
                            context.log("registered again with the broker (epoch \(epoch))")
                            group.addTask {
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
                    case .event, .gap, .completion: break
                    }
                }
                inbound.finish()
                stops.continuation.finish()
            }
        }
        // Calls answered on the socket thread run in tasks of their own: the runner ends after them,
        // or once their callers stopped waiting (a handler that outlives its deadline does not hold
        // the process).
        let abandoned = await immediate.requests.drained(grace: .seconds(1))
        if abandoned > 0 {
            Console.log(
                name,
                "stopped waiting for \(abandoned) request(s) still running past the deadlines their senders wait for: cancelled",
                level: .warning)
        }
        if let refusal { throw refusal }
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
        // Deactivated before UNREGISTER: once the broker forgets the keys, nothing here runs them.
        await service.keyedActors?.leave(context, as: context.serviceName)
        service.hostedActor?.stop(context, as: context.serviceName)
        await context.client.close()
    }
}
