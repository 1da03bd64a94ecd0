import LifelineProtocol

/// A Lifeline service: a name, handlers for the lifecycle events it cares about, request methods, and
/// the DTService hooks. Build it with the chained modifiers, then call ``main()``:
///
/// ```swift
/// try await Service("push")
///     .on(.didRegisterForRemoteNotifications) { event in print(event["deviceToken"] ?? "-") }
///     .method("status") { _ in ["tokens": 1] }
///     .main()
/// ```
///
/// The service subscribes on the bus to exactly the events it has handlers for.
public struct Service: Sendable {
    public typealias EventHandler = @Sendable (Event) async throws -> Void
    public typealias AnswerHandler = @Sendable (Event) async throws -> Answer
    public typealias MethodHandler = @Sendable (CallRequest) async throws -> JSONValue
    public typealias Hook = @Sendable (ServiceContext) async throws -> Void
    /// Makes the delegate of a new session of an app.
    public typealias AppFactory = @Sendable (AppSession) -> any MicroAppDelegate
    public typealias Interceptor = @Sendable (StartRequest, ServiceContext) async throws -> StartDecision

    /// An inline handler (``onInline(_:priority:deadline:perform:)``): the socket thread runs it the
    /// moment its event arrives.
    public typealias InlineEventHandler = @Sendable (Event) throws -> Void

    /// An inline method (``methodInline(_:_:)``): the socket thread answers it as the call arrives.
    public typealias InlineMethodHandler = @Sendable (CallRequest) throws -> JSONValue

    struct Method {
        let run: MethodHandler
        /// The handler as a plain function, when it was given inline (``Service/methodInline(_:_:)``).
        let immediate: InlineMethodHandler?
        /// The handler answering JSON text, when it was given typed: its reply never becomes a tree.
        var text: (@Sendable (CallRequest) async throws -> [UInt8])? = nil
    }

    struct Handler {
        let run: AnswerHandler
        /// The handler as a plain function, when it was given inline (``Service/onInline(_:priority:deadline:perform:)``).
        let immediate: InlineEventHandler?
        let priority: Int?
        let deadline: Int?
    }

    public let name: String
    private(set) var eventHandlers: [EventName: Handler] = [:]
    private(set) var methodHandlers: [String: Method] = [:]
    /// What `lifeline describe` shows of this service.
    var description = ServiceDescription()
    private(set) var didCreateHook: (@Sendable () async throws -> Void)?
    private(set) var startHook: Hook?
    private(set) var willDestroyHook: Hook?
    private(set) var heartbeat = HeartbeatSettings.standard
    private(set) var resumeHook: (@Sendable () async throws -> EventCursor?)?
    private(set) var gapHook: (@Sendable (GapNotice, ServiceContext) async -> Void)?
    private(set) var appFactories: [String: AppFactory] = [:]
    /// The actions each app says it answers (an action outside the list is refused, naming them).
    private(set) var appActions: [String: [String]] = [:]
    private(set) var interceptor: (priority: Int, handler: Interceptor)?
    private(set) var isLazy = false
    /// Whether several processes may serve this name at once (``replicable(_:)``).
    private(set) var isReplicable = false
    /// Methods (and actor funcs) a call may be sent again to another instance for (``idempotent(_:)``).
    private(set) var idempotentMethods: Set<String> = []
    /// Events each of which goes to one instance only (``shared(_:)``).
    private(set) var sharedEvents: Set<EventName> = []
    /// Declared boot tasks by short name (the registered name is prefixed when the service runs).
    private(set) var bootTasks: [String: BootTaskHandler] = [:]
    private(set) var startTaskDeclaration: BootTask?
    /// The distributed actor this service hosts (``actor(_:)``).
    var hostedActor: (any HostedActorBox)?
    /// The actors this service hosts by key (``actors(idleAfter:deactivate:_:)``).
    var keyedActors: (any KeyedActorHosting)?
    /// The methods that are the hosted actor's funcs: method → `Type.func(labels:)`.
    var actorMethods: [String: String] = [:]
    /// Mistakes in how the service was put together: it refuses to start, naming them.
    var configurationProblems: [String] = []
    /// What the service leaves out of what it was given, logged when it starts.
    var hostingNotes: [String] = []

    struct BootTaskHandler {
        let declaration: BootTask
        let body: @Sendable (BootContext) async throws -> Void
        let canExecute: (@Sendable (BootContext) async -> Bool)?
    }

    /// A service named `name` (letters, digits, `_`, `-`, `.`).
    public init(_ name: String) { self.name = name }

    /// Handles `event`; the service subscribes to it. Events reach handlers one at a time, in bus
    /// order, on the service's handler thread (`ll-handlers`): a handler may take its time (compute, await) without
    /// holding up heartbeats, calls or the reading of the bus — later events wait for it, nothing
    /// else does. When the event is dispatched, the handler answers `continue`.
    /// - Parameters:
    ///   - priority: the service's place in dispatch chains of this event (higher first; default 0).
    ///   - deadline: how long a dispatch step may take for this service.
    public func on(
        _ event: EventName, priority: Int? = nil, deadline: Duration? = nil,
        perform handler: @escaping EventHandler
    ) -> Service {
        handle(event, priority: priority, deadline: deadline) { event in
            try await handler(event)
            return .continue
        }
    }

    /// Handles `event` inline, on the service's socket thread, the moment the event is received
    /// (when no earlier event is still being handled; otherwise in bus order like ``on(_:priority:deadline:perform:)``):
    /// no queue, no thread hop. For short synchronous work only — a counter, a cache update, a
    /// hand-off to a task — since the socket thread also sends heartbeats and reads calls and events:
    /// a handler that runs past the heartbeat interval is reported in the log, by name, and one that
    /// runs past the broker's liveness window makes the broker drop the service. It may run outside
    /// any task (no task-locals, no cancellation).
    public func onInline(
        _ event: EventName, priority: Int? = nil, deadline: Duration? = nil,
        perform handler: @escaping InlineEventHandler
    ) -> Service {
        var copy = self.checkingHandler(event)
        copy.eventHandlers[event] = Handler(
            run: { event in
                try handler(event)
                return .continue
            }, immediate: handler, priority: priority, deadline: deadline?.wholeMilliseconds)
        return copy
    }

    /// Handles `event` with an ``Answer``: for dispatched events the answer decides whether the chain
    /// goes on, may rewrite the payload, and carries the completion.
    public func handle(
        _ event: EventName, priority: Int? = nil, deadline: Duration? = nil,
        answer handler: @escaping AnswerHandler
    ) -> Service {
        var copy = self.checkingHandler(event)
        let milliseconds = deadline?.wholeMilliseconds
        copy.eventHandlers[event] = Handler(
            run: handler, immediate: nil, priority: priority, deadline: milliseconds)
        return copy
    }

    /// Where the service resumes after a restart: return the cursor of the last event it handled
    /// (``Event/cursor``, persisted with the handler's effects) and the broker replays what came after.
    public func resume(from cursor: @escaping @Sendable () async throws -> EventCursor?) -> Service {
        var copy = self
        copy.resumeHook = cursor
        return copy
    }

    /// Called when events were lost for good (the journal no longer held them, or the broker restarted).
    public func onGap(_ handler: @escaping @Sendable (GapNotice, ServiceContext) async -> Void) -> Service {
        var copy = self
        copy.gapHook = handler
        return copy
    }

    /// Answers calls to `method`; calls run concurrently, on the Swift concurrency pool. Throw
    /// ``ServiceError`` to answer with a status.
    ///
    /// An `idempotent` method may run twice for one call: when the instance answering it goes away,
    /// the broker sends the call to another instance of the service (``idempotent(_:)``).
    public func method(_ method: String, idempotent: Bool = false, _ handler: @escaping MethodHandler)
        -> Service
    {
        var copy = self.checkingName(method)
        copy.methodHandlers[method] = Method(run: handler, immediate: nil)
        return idempotent ? copy.idempotent(method) : copy
    }

    /// Answers calls to `method` with JSON text (a typed method: ``method(_:summary:_:)``).
    func textMethod(_ method: String, _ handler: @escaping @Sendable (CallRequest) async throws -> [UInt8])
        -> Service
    {
        var copy = self.checkingName(method)
        copy.methodHandlers[method] = Method(
            run: { call in
                let text = try await handler(call)
                return text.isEmpty ? .null : try JSONParser.parse(text)
            }, immediate: nil, text: handler)
        return copy
    }

    /// Answers calls to `method` inline, on the service's socket thread, as the call arrives: no
    /// task to start, and the answer leaves at once. For short synchronous work only (see
    /// ``onInline(_:priority:deadline:perform:)``: a slow one holds up heartbeats and is reported).
    public func methodInline(_ method: String, _ handler: @escaping InlineMethodHandler) -> Service {
        var copy = self.checkingName(method)
        copy.methodHandlers[method] = Method(run: { try handler($0) }, immediate: handler)
        return copy
    }

    /// Answers `method`, described for `lifeline describe`: one line, and the shapes of its body
    /// and reply (e.g. `{"url": string}`).
    public func method(
        _ method: String, summary: String, arguments: String = "", reply: String = "",
        _ handler: @escaping MethodHandler
    ) -> Service {
        self.method(method, handler).describing(method, summary: summary, arguments: arguments, reply: reply)
    }

    /// Answers `method` inline on the socket thread, described for `lifeline describe`.
    public func methodInline(
        _ method: String, summary: String, arguments: String = "", reply: String = "",
        _ handler: @escaping InlineMethodHandler
    ) -> Service {
        self.methodInline(method, handler).describing(
            method, summary: summary, arguments: arguments, reply: reply)
    }

    func describing(_ method: String, summary: String, arguments: String, reply: String) -> Service {
        var copy = self
        copy.description.methods[method] = ServiceDescription.Method(
            summary: summary, arguments: arguments, reply: reply)
        return copy
    }

    /// Describes a custom event this service publishes or handles: one line and its fields' types
    /// (a typed handler, ``on(_:priority:deadline:perform:)-(E.Type,_,_,_)``, gives the fields of
    /// its type: leave `fields` empty then).
    public func describeEvent(_ event: EventName, summary: String, fields: [String: String] = [:]) -> Service
    {
        var copy = self
        let known = copy.description.events[event.rawValue]?.fields ?? [:]
        copy.description.events[event.rawValue] = ServiceDescription.Event(
            summary: summary, fields: fields.isEmpty ? known : fields)
        return copy
    }

    /// Hosts the micro-app `name`: the broker may start sessions of it here; `factory` makes one
    /// delegate per session.
    public func app(_ name: String, _ factory: @escaping AppFactory) -> Service {
        var copy = self
        if appFactories[name] != nil {
            copy.configurationProblems.append(
                "the app '\(name)' is hosted twice; the second would replace the first")
        }
        copy.appFactories[name] = factory
        return copy
    }

    /// Hosts `name`, whose sessions answer `actions`: any other action is refused with the list.
    public func app(_ name: String, actions: [String], _ factory: @escaping AppFactory) -> Service {
        var copy = app(name, factory)
        copy.appActions[name] = actions
        return copy
    }

    /// Sees every start request before it happens and may change or refuse it (higher priority first).
    public func interceptStarts(priority: Int = 0, _ handler: @escaping Interceptor) -> Service {
        var copy = self
        copy.interceptor = (priority, handler)
        return copy
    }

    /// Declares a boot task (MPIBootTask): it runs once per boot, in `phase` (higher `priority`
    /// first), after the tasks in `after` (any process: `gateway.start`; own tasks by short name),
    /// concurrently with other asynchronous tasks when `async`, only when `condition` holds (a launch
    /// option, an environment variable) and `canExecute` says yes. A failure of a `required` task stops
    /// the boot; a `runOnce` task runs once ever.
    public func bootTask(
        _ name: String, phase: String = "services", priority: Int = 0, async: Bool = false,
        after: [String] = [],
        when condition: BootCondition? = nil, canExecute: (@Sendable (BootContext) async -> Bool)? = nil,
        deadline: Duration = .seconds(10), required: Bool = false, runOnce: Bool = false,
        _ body: @escaping @Sendable (BootContext) async throws -> Void
    ) -> Service {
        var copy = self
        let milliseconds = deadline.wholeMilliseconds
        let declaration = BootTask(
            name: name, service: "", phase: phase, priority: priority, isAsynchronous: async, after: after,
            condition: condition ?? (canExecute == nil ? nil : .check),
            deadlineMilliseconds: max(1, milliseconds), isRequired: required,
            runsOnce: runOnce)
        copy.bootTasks[name] = BootTaskHandler(declaration: declaration, body: body, canExecute: canExecute)
        return copy
    }

    /// Places the service's start (its `start` hook, task `NAME.start`) in the boot: by default it runs
    /// in the `services` phase with priority 0, synchronously, after nothing.
    public func startTask(
        phase: String = "services", priority: Int = 0, async: Bool = false, after: [String] = [],
        required: Bool = false
    ) -> Service {
        var copy = self
        copy.startTaskDeclaration = BootTask(
            name: "start", service: "", kind: .start, phase: phase, priority: priority, isAsynchronous: async,
            after: after, isRequired: required)
        return copy
    }

    /// The boot tasks as registered under `serviceName`.
    package func bootDeclarations(as serviceName: String) -> [BootTask] {
        var declared = bootTasks.values.map(\.declaration) + (startTaskDeclaration.map { [$0] } ?? [])
        let own = Set(declared.map(\.name))
        for index in declared.indices {
            declared[index].service = serviceName
            declared[index].name = "\(serviceName).\(declared[index].name)"
            declared[index].after = declared[index].after.map {
                own.contains($0) ? "\(serviceName).\($0)" : $0
            }
        }
        return declared.sorted { $0.name < $1.name }
    }

    /// Lets several processes run this service at once, on any hosts: each registers as an instance of
    /// the name. The broker balances calls over them (fewest in flight first) and every instance
    /// receives the service's events. Every instance must declare the same events and methods. A
    /// micro-app session lives in the instance it started on (the one hosting the fewest).
    public func replicable(_ replicable: Bool = true) -> Service {
        var copy = self
        copy.isReplicable = replicable
        return copy
    }

    /// Declares `methods` (methods or the hosted actor's funcs, by name) idempotent: running one twice
    /// for a call does no harm, so when the instance answering it dies or loses its connection the
    /// broker sends the call to another instance within its deadline. A call to any other method
    /// fails at once with `unavailable` instead. Naming a method the service does not answer stops it
    /// from starting.
    public func idempotent(_ methods: String...) -> Service {
        var copy = self
        copy.idempotentMethods.formUnion(methods)
        return copy
    }

    /// Delivers each of `events` (events this service handles) to **one** of its instances instead of
    /// every one: the broker sends it to the connected instance with the fewest such events in flight,
    /// which acknowledges it once its handler has run; when that instance dies first, another gets it
    /// (so a handler may see an event twice: make it idempotent, or persist what it did). Events
    /// published while no instance runs are held for the name (up to the broker's journal capacity)
    /// and delivered when one registers. Other events go to every instance (the default). Naming an
    /// event the service does not handle stops it from starting.
    public func shared(_ events: EventName...) -> Service {
        var copy = self
        copy.sharedEvents.formUnion(events)
        return copy
    }

    /// ``shared(_:)`` for a typed event.
    public func shared<E: LifelineEvent>(_ type: E.Type) -> Service { shared(E.name) }

    /// Started only on its first lookup or call (mPaaS lazyLoading) instead of right after registering.
    public func lazy(_ lazy: Bool = true) -> Service {
        var copy = self
        copy.isLazy = lazy
        return copy
    }

    /// Runs once when the service has registered for the first time (DTService didCreate).
    public func didCreate(_ hook: @escaping @Sendable () async throws -> Void) -> Service {
        var copy = self
        copy.didCreateHook = hook
        return copy
    }

    /// Runs when the broker starts the service (DTService start): right after it registers, or on its
    /// first lookup or call when it is ``lazy(_:)``.
    public func start(_ hook: @escaping Hook) -> Service {
        var copy = self
        copy.startHook = hook
        return copy
    }

    /// Runs once at shutdown, before the service unregisters (DTService willDestroy).
    public func willDestroy(_ hook: @escaping Hook) -> Service {
        var copy = self
        copy.willDestroyHook = hook
        return copy
    }

    /// Sets how often the service heartbeats and how many beats the broker lets it miss.
    public func heartbeat(every interval: Duration, liveness: Int) -> Service {
        var copy = self
        copy.heartbeat = HeartbeatSettings(
            intervalMilliseconds: interval.wholeMilliseconds, liveness: liveness)
        return copy
    }

    /// The events the service handles, sorted.
    public var events: [EventName] { eventHandlers.keys.sorted() }

    var priorities: [EventName: Int] { eventHandlers.compactMapValues(\.priority) }
    var deadlines: [EventName: Int] { eventHandlers.compactMapValues(\.deadline) }
    /// The methods the service answers, sorted.
    public var methods: [String] { methodHandlers.keys.sorted() }
    /// The micro-apps it hosts, sorted.
    public var apps: [String] { appFactories.keys.sorted() }
}
