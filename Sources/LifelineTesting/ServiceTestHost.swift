import Foundation
import Lifeline
import LifelineProtocol
import Synchronization

/// Runs a ``Service`` against an in-memory broker, for unit tests: no process, no socket, no port.
/// The test plays the broker — it publishes and dispatches events, calls methods, runs the start
/// hook and boot tasks, drives micro-app callbacks — and reads back what the service answered and
/// asked for (its own publications, its Router's stack changes). Time on the events it delivers
/// comes from a manual clock the test advances.
///
/// ```swift
/// @Test func resolvesTopUp() async throws {
///     let host = try await ServiceTestHost(URLService.make())
///     let route = try await host.call("resolve", ["url": "app://topup"])
///     #expect(route["route"] == "TopUpApp")
///     try await host.stop()
/// }
/// ```
public final class ServiceTestHost: Sendable {
    /// What a dispatched event's handler answered.
    public struct DispatchAnswer: Sendable, Equatable {
        /// `continue`, `return`, `returnYES` or `returnNO`.
        public var result: String
        /// The payload the handler rewrote for the services after it, if it did.
        public var payload: JSONValue?
        /// The completion the handler gave, if it did.
        public var completion: JSONValue?
    }

    /// An event the service published through its client.
    public struct Publication: Sendable, Equatable {
        public var event: String
        public var payload: JSONValue
    }

    /// A handler that threw: its event and what it said.
    public struct HandlerFailure: Error, Sendable, CustomStringConvertible {
        public var event: String
        public var message: String
        public var description: String { "the handler of \(event) failed: \(message)" }
    }

    struct State {
        var sequence: UInt64 = 0
        var topicSequences: [String: UInt64] = [:]
        var wallNanoseconds: UInt64
        var monotonicNanoseconds: UInt64 = 1_000_000_000
        var requests: UInt64 = 0
        var acknowledgements: [UInt64: CheckedContinuation<String?, Never>] = [:]
        /// Events published and not acknowledged yet, by sequence: sent again, as the broker's
        /// journal would, when a service that resumes from a cursor refused them and has room again.
        var unacknowledged: [UInt64: BusMessage] = [:]
        /// The first sequence refused while the handlers were full.
        var refusedFrom: UInt64?
        var answers: [String: CheckedContinuation<ControlReply, Never>] = [:]
        var published: [Publication] = []
        var stackChanges: [JSONValue] = []
        var sessions: UInt64 = 0
    }

    /// The registered name.
    public let name: String
    private let runner: ServiceRunner
    private let connection: InMemoryConnection
    private let running: Task<Void, any Error>
    private let serving: Task<Void, Never>
    private let state: Shared
    /// Deliveries reach the service one at a time, as from one socket thread (inline handlers run
    /// inside them and must not overlap).
    private let delivering = Mutex(())
    private let epoch: UInt64 = 1
    /// ``actorSystem``, made on first use.
    let actors = Mutex<LifelineActorSystem?>(nil)

    /// Starts `service` (its didCreate runs) against the in-memory broker and returns once it is
    /// registered. `name` replaces the service's own, as `--name` would.
    /// - Throws: what the service's start throws (its didCreate hook's failure is only logged).
    public init(
        _ service: Service, name: String? = nil, wallClock: Date = Date(timeIntervalSince1970: 1_700_000_000)
    )
        async throws
    {
        let (runner, connection) = ServiceRunner.inMemory(service, name: name)
        self.runner = runner
        self.connection = connection
        self.name = runner.name
        state = Shared(State(wallNanoseconds: UInt64(wallClock.timeIntervalSince1970 * 1e9)))
        running = Task { try await runner.run() }
        let state = self.state
        serving = Task { [connection] in
            while true {
                let command = await connection.nextCommand()
                switch command {
                case .request(let request, let ticket, _):
                    connection.deliver(.completion(ticket: ticket, Self.answer(request, state: state)))
                case .answer(let reply):
                    let waiter = state.withLock {
                        $0.answers.removeValue(forKey: String(decoding: reply.requestID, as: UTF8.self))
                    }
                    waiter?.resume(returning: reply)
                case .acknowledge(let sequence, _, let error):
                    let waiter = state.withLock {
                        $0.unacknowledged[sequence] = nil
                        return $0.acknowledgements.removeValue(forKey: sequence)
                    }
                    waiter?.resume(returning: error)
                case .handlersFull(_, let sequence, _):
                    state.withLock { $0.refusedFrom = min($0.refusedFrom ?? .max, sequence) }
                case .handlersHaveRoom(let resume):
                    resume()
                    let again = state.withLock { state -> [BusMessage] in
                        guard let from = state.refusedFrom else { return [] }
                        state.refusedFrom = nil
                        return state.unacknowledged.values.filter { $0.header.sequence >= from }
                            .sorted { $0.header.sequence < $1.header.sequence }
                    }
                    for message in again {
                        connection.deliver(.event(message, receivedAt: 0, replayed: true))
                    }
                case .cancel: break
                case .shutdown: return
                }
            }
        }
        if await runner.phase.wait(for: .connected) == .ended { try await Self.ended(running) }
        await connection.attached()
        connection.deliver(.joined(epoch: epoch, first: true, sequence: 0, lifecycle: "active"))
        if await runner.phase.wait(for: .serving) == .ended { try await Self.ended(running) }
    }

    /// What the service describes of itself, as REGISTER carries it and `lifeline describe` shows it:
    /// its methods' shapes, its custom events' fields.
    package var serviceDescription: ServiceDescription {
        runner.registration?.description ?? ServiceDescription()
    }

    /// What the service registered with (REGISTER's header).
    package var registration: ServiceRegistration? { runner.registration }

    /// A service whose `run()` ended while the host was starting it: what it threw.
    private static func ended(_ running: Task<Void, any Error>) async throws -> Never {
        try await running.value
        throw LifelineError(.unavailable, "the service stopped before it was serving")
    }

    /// A host that goes away stops its service (willDestroy, unregister), so nothing keeps running
    /// after a test that did not reach ``stop()``.
    deinit { runner.stop() }

    // MARK: The clock

    /// Moves the broker's clocks (wall and monotonic) forward: events delivered from now on carry
    /// the later times.
    public func advance(by duration: Duration) {
        state.withLock {
            $0.wallNanoseconds &+= duration.wholeNanoseconds
            $0.monotonicNanoseconds &+= duration.wholeNanoseconds
        }
    }

    /// The broker's wall clock now.
    public var now: Date {
        Date(timeIntervalSince1970: Double(state.withLock { $0.wallNanoseconds }) / 1e9)
    }

    // MARK: Events

    /// Publishes `event` to the service, as the bus would, and returns once its handler has run
    /// (the event asks for acknowledgement). Returns the event's sequence.
    /// - Throws: ``HandlerFailure`` when the handler threw.
    @discardableResult
    public func publish(_ event: EventName, _ payload: JSONValue = .emptyObject) async throws -> UInt64 {
        try await publish(event, text: JSONWriter.encode(payload))
    }

    /// ``publish(_:_:)`` with the payload as JSON text (a typed event's encoding).
    func publish(_ event: EventName, text payload: [UInt8]) async throws -> UInt64 {
        let message = stamp(event, payload, flags: 1)
        let error = await withCheckedContinuation { continuation in
            state.withLock {
                $0.acknowledgements[message.header.sequence] = continuation
                $0.unacknowledged[message.header.sequence] = message
            }
            deliver(
                .event(message, receivedAt: message.header.publishedMonotonicNanoseconds, replayed: false))
        }
        if let error { throw HandlerFailure(event: event.rawValue, message: error) }
        return message.header.sequence
    }

    /// Offers `event` to the service as one step of a dispatch, and returns its handler's answer.
    /// - Throws: `LifelineError` when the service answers with an error status.
    public func dispatch(
        _ event: EventName, _ payload: JSONValue = .emptyObject, timeout: Duration = .seconds(5)
    )
        async throws -> DispatchAnswer
    {
        try await dispatch(event, text: JSONWriter.encode(payload), timeout: timeout)
    }

    /// ``dispatch(_:_:timeout:)`` with the payload as JSON text (a typed event's encoding).
    func dispatch(_ event: EventName, text payload: [UInt8], timeout: Duration) async throws -> DispatchAnswer
    {
        let reply = await ask(offer(event, payload, timeout: timeout))
        return try Self.dispatchAnswer(of: reply).get()
    }

    // MARK: Calls and hooks

    /// Calls `method` of the service (or of a service it registered at run time, `service`) and
    /// returns its answer; with `key`, of its actor by that key (activated on the first call, as
    /// the broker would have it).
    /// - Throws: `LifelineError` with the status and message the service answered.
    public func call(
        _ method: String, _ body: JSONValue = .null, service: String? = nil, key: String? = nil,
        timeout: Duration = .seconds(5)
    ) async throws -> JSONValue {
        try Self.body(
            of: await call(
                method, text: JSONWriter.encode(body), service: service, key: key, timeout: timeout))
    }

    /// ``call(_:_:service:key:timeout:)`` with the body as JSON text; the reply as it came (typed
    /// calls and the actor system decode its text).
    func call(_ method: String, text body: [UInt8], service: String?, key: String?, timeout: Duration) async
        -> ControlReply
    {
        await ask(
            .call(
                ServiceCall(
                    service: service ?? name, method: method, key: key,
                    timeoutMilliseconds: timeout.wholeMilliseconds, body: body)))
    }

    /// Runs the service's start hook, as the broker does when it starts the service.
    /// - Throws: `LifelineError` when the hook failed.
    public func start() async throws {
        _ = try Self.body(of: await ask(.start(name: name)))
    }

    /// Runs the boot task `task` (its short name) with `launchOptions`; returns its outcome
    /// (`{"outcome": "done"}` or `{"outcome": "skipped", "reason": …}`).
    /// - Throws: `LifelineError` when the task failed.
    public func runBootTask(_ task: String, launchOptions: JSONValue = .emptyObject) async throws -> JSONValue
    {
        let declared = runner.service.bootDeclarations(as: name).first { $0.name == "\(name).\(task)" }
        // The broker checks a launch option itself and never sends a task whose option is not set.
        if case .launchOption(let key)? = declared?.condition,
            [nil, .null, false].contains(launchOptions[key])
        {
            return ["outcome": "skipped", "reason": .string("condition: launch option '\(key)' is not set")]
        }
        let run = BootTaskRun(
            task: "\(name).\(task)", kind: declared?.kind ?? .task, condition: declared?.condition,
            launchOptions: launchOptions)
        return try Self.body(of: await ask(.boot(run)))
    }

    // MARK: Micro-apps

    /// Starts a session of `app` here as the broker would (didCreate, willStartLaunching,
    /// didFinishLaunching) and returns its id and what its root shows.
    /// - Throws: `LifelineError` when a callback failed.
    public func startSession(_ app: String, params: JSONValue = .emptyObject) async throws -> (
        session: String, root: JSONValue
    ) {
        let session = "s\(state.withLock { $0.sessions += 1; return $0.sessions })"
        let record: JSONValue = [
            "id": .string(session), "app": .string(app), "params": params, "mode": "pushWithAnimation",
            "host": .string(name), "state": "launching", "parent": .null,
        ]
        let created = try await callback(.didCreate, session: session, app: app, ["record": record])
        _ = try await callback(.willStartLaunching, session: session, app: app, ["options": params])
        _ = try await callback(.didFinishLaunching, session: session, app: app)
        return (session, created["root"] ?? .null)
    }

    /// Delivers one micro-app callback — `didCreate`, `willStartLaunching`, `didFinishLaunching`,
    /// `willPause`, `willResume`, `didResume`, `willTerminate`, `shouldTerminate`, `childDidFinish`,
    /// `restore` or `action` — to the session `session` of `app` and returns the answer.
    /// - Throws: `LifelineError`: `.invalid` for a callback of another name, or the callback's failure.
    @discardableResult
    public func callback(
        _ name: String, session: String, app: String, _ arguments: JSONValue = .emptyObject
    ) async throws -> JSONValue {
        guard let callback = AppCallbackName(rawValue: name) else {
            let known = AppCallbackName.allCases.map(\.rawValue).joined(separator: ", ")
            throw LifelineError(
                .badRequest, "no micro-app callback is named '\(name)'; the callbacks are \(known)")
        }
        return try await self.callback(callback, session: session, app: app, arguments)
    }

    @discardableResult
    private func callback(
        _ callback: AppCallbackName, session: String, app: String, _ arguments: JSONValue = .emptyObject
    ) async throws -> JSONValue {
        let id = String(UInt64.random(in: .min ... .max), radix: 16)
        let request = AppCallbackRequest(
            session: session, app: app, callback: callback, arguments: arguments, callbackID: id)
        return try Self.body(of: await ask(.app(request)))
    }

    /// Asks the session to perform `action` with `body` (APPS action); returns its answer.
    /// - Throws: `LifelineError` with the status the session answered.
    public func action(_ action: String, session: String, app: String, body: JSONValue = .null) async throws
        -> JSONValue
    {
        try await callback(.action, session: session, app: app, ["action": .string(action), "body": body])
    }

    // MARK: What the service asked for

    /// The events the service published through its client, in order.
    public var published: [Publication] { state.withLock { $0.published } }

    /// The micro-app stack changes the service's sessions asked for (APPS headers, e.g.
    /// `{"op": "start", "app": "home", …}`), in order; each was answered as done.
    public var stackChanges: [JSONValue] { state.withLock { $0.stackChanges } }

    /// Stops the service (willDestroy, unregister) and waits until it has.
    /// - Throws: what the service's run threw.
    public func stop() async throws {
        runner.stop()
        try await running.value
        serving.cancel()
    }

    // MARK: The in-memory broker

    /// The broker's state, shared with the task that answers the service's client.
    final class Shared: Sendable {
        private let state: Mutex<State>
        init(_ state: State) { self.state = Mutex(state) }
        func withLock<T: Sendable>(_ body: (inout State) -> T) -> T { state.withLock { body(&$0) } }
    }

    private func deliver(_ event: ConnectionEvent) {
        delivering.withLock { _ in connection.deliver(event) }
    }

    private func stamp(_ event: EventName, _ payload: [UInt8], flags: UInt64) -> BusMessage {
        let header = state.withLock { state -> BusHeader in
            state.sequence += 1
            state.topicSequences[event.rawValue, default: 0] += 1
            return BusHeader(
                epoch: epoch, sequence: state.sequence,
                topicSequence: state.topicSequences[event.rawValue] ?? 1,
                flags: flags, publishedWallNanoseconds: state.wallNanoseconds,
                publishedMonotonicNanoseconds: state.monotonicNanoseconds)
        }
        return BusMessage(name: event, header: header, payload: payload)
    }

    private func ask(_ request: BrokerRequest) async -> ControlReply {
        let id = "t\(state.withLock { $0.requests += 1; return $0.requests })"
        return await withCheckedContinuation { continuation in
            state.withLock { $0.answers[id] = continuation }
            deliver(.request(request, id: Array(id.utf8)))
        }
    }

    /// The OFFER of one dispatch step.
    private func offer(_ event: EventName, _ payload: [UInt8], timeout: Duration) -> BrokerRequest {
        var offer = DispatchOffer(
            event: event, dispatch: state.withLock { $0.sequence } + 1, step: 0,
            timeoutMilliseconds: timeout.wholeMilliseconds, mode: .chain,
            completion: EventCatalog.descriptor(for: event)?.completion, payload: .emptyObject)
        offer.payloadText = payload
        return .offer(offer)
    }

    /// The answer to an OFFER. This and ``body(of:)`` stay out of line: inlined into the async
    /// functions above, their typed-throwing decoding crashes the Swift 6.3.1 optimizer (coroutine
    /// splitting, `-c release`).
    @inline(never)
    private static func dispatchAnswer(of reply: ControlReply) -> Result<DispatchAnswer, any Error> {
        Result {
            guard reply.status.isSuccess else { throw LifelineError(reply: reply) }
            let answer = try Answer(body: reply.body)
            return DispatchAnswer(
                result: answer.result.rawValue, payload: answer.payload, completion: answer.completion)
        }
    }

    @inline(never)
    static func body(of reply: ControlReply) throws -> JSONValue {
        guard reply.status.isSuccess else { throw LifelineError(reply: reply) }
        return try reply.json()
    }
}
