import LifelineProtocol
import Synchronization

/// An async client of the broker: publish events, find services, call them.
///
/// The socket lives on its own thread; requests cross to it through a mailbox and replies come back
/// as resumed continuations, so no ZeroMQ call ever runs on the Swift concurrency pool.
public final class LifelineClient: Sendable {
    /// The broker endpoint used when none is given: `LIFELINE_BROKER`, else the broker's default.
    public static var defaultBroker: String { Environment.brokerEndpoint }

    /// The control endpoint this client talks to.
    public let brokerEndpoint: String
    private let connection: any Connection
    private let pending: PendingReplies
    /// This client's publications on their way out, coalesced into batches when they come faster
    /// than the broker answers.
    let publishing: PublishCoalescer

    /// Connects to the broker at `broker`, with CURVE when `credentials` are given (by default those
    /// of `LIFELINE_KEY` and `LIFELINE_BROKER_KEY`). An address that is not `tcp://HOST:PORT` or
    /// `ipc://PATH` (or a comma-separated list of them) fails every request at once with `.invalid`.
    public convenience init(
        broker: String = LifelineClient.defaultBroker,
        credentials: LifelineClient.Credentials? = LifelineClient.Credentials.environment
    ) {
        var configuration = ConnectionConfiguration(brokerEndpoint: broker, token: Environment.uniqueToken())
        configuration.credentials = credentials
        self.init(configuration: configuration) { _ in }
    }

    /// A client whose connection may also register a service or subscribe to the bus; `deliver` gets
    /// everything but request completions, on the socket thread.
    convenience init(
        configuration: ConnectionConfiguration, deliver: @escaping @Sendable (ConnectionEvent) -> Void
    ) {
        self.init(brokerEndpoint: configuration.brokerEndpoint, deliver: deliver) { pending, deliver in
            ConnectionThread(
                configuration: configuration, name: "ll-socket", pending: pending, deliver: deliver)
        }
    }

    /// A client over the connection `connect` makes (the socket thread, or an in-memory connection
    /// in tests), given where completions and deliveries go.
    init(
        brokerEndpoint: String, deliver: @escaping @Sendable (ConnectionEvent) -> Void,
        connect: (PendingReplies, @escaping @Sendable (ConnectionEvent) -> Void) -> any Connection
    ) {
        let pending = PendingReplies()
        self.pending = pending
        self.brokerEndpoint = brokerEndpoint
        let connection = connect(pending, deliver)
        self.connection = connection
        let group = ConnectionConfiguration.split(brokerEndpoint).count > 1
        self.publishing = PublishCoalescer(
            token: Environment.uniqueToken(), attempt: group ? .seconds(1) : PublishCoalescer.defaultAttempt
        ) {
            publication, timeout, completion in
            let ticket = pending.park(.handler(completion))
            connection.post(
                .request(
                    .publish(publication), ticket: ticket,
                    timeoutMilliseconds: max(1, timeout.wholeMilliseconds)))
            return {
                pending.discard(ticket)
                connection.post(.cancel(ticket: ticket))
            }
        }
    }

    deinit { connection.post(.shutdown) }

    /// The socket thread as an executor (nil for an in-memory connection): tasks that prefer it
    /// get their replies without a thread hand-off (``SocketExecutor``).
    var executor: (any TaskExecutor)? { connection.executor }

    /// Sends `request` and returns the broker's reply; a non-2xx reply throws ``LifelineError``.
    /// Cancelling the task ends the wait at once with `CancellationError` and forgets the request
    /// (one not sent yet is not sent; one sent already may still be carried out by the broker, and
    /// its answer is dropped).
    package func request(_ request: ClientRequest, timeout: Duration = .seconds(5)) async throws
        -> ControlReply
    {
        let milliseconds = timeout.wholeMilliseconds
        let (pending, connection) = (self.pending, self.connection)
        return try await withTaskExecutorPreference(executor) {
            try await CancellableWaiter.wait { waiter in
                let ticket = pending.park(.continuation(waiter))
                connection.post(.request(request, ticket: ticket, timeoutMilliseconds: max(1, milliseconds)))
                waiter.whenCancelled {
                    pending.discard(ticket)
                    connection.post(.cancel(ticket: ticket))
                }
            }
        }
    }

    /// Sends a request without waiting: it leaves in call order, and `completion` gets the reply (or
    /// the error) on the socket thread.
    package func send(
        _ request: ClientRequest, timeout: Duration = .seconds(5),
        completion: @escaping @Sendable (Result<ControlReply, LifelineError>) -> Void
    ) {
        let ticket = pending.park(.handler(completion))
        connection.post(
            .request(request, ticket: ticket, timeoutMilliseconds: max(1, timeout.wholeMilliseconds)))
    }

    /// An operation on the Context's micro-app stack; waits until its callbacks have run and returns
    /// the reply.
    /// - Throws: ``LifelineError``: `.unavailable` or `.timeout` when the broker does not answer, or the status of a refused operation (`.notFound`, `.conflict`, `.forbidden`, …).
    package func apps(_ operation: AppsRequest, timeout: Duration = .seconds(60)) async throws -> JSONValue {
        try await request(.apps(operation), timeout: timeout).json()
    }

    /// Where the bus is, the broker's epoch and heartbeat rules.
    /// - Throws: ``LifelineError``: `.unavailable` or `.timeout` when the broker does not answer.
    package func hello() async throws -> BrokerInfo {
        try BrokerInfo(bytes: try await request(.hello).body)
    }

    /// Publishes `event` with `payload` (a JSON object); returns its sequence and subscriber count.
    ///
    /// A lone publish leaves at once. Publishes made while an earlier one of this client is on its
    /// way (from many tasks, or behind ``post(_:_:timeout:)``) leave together, in order, as one
    /// batch when it is answered; each still gets its own receipt. An acknowledged publish, or one
    /// of an event that moves the lifecycle, waits for the publications before it and then leaves
    /// alone; several of them from many tasks are in flight together.
    ///
    /// The publication carries an id of this client's; when the broker does not answer (it is
    /// restarting, or the network is down) it is sent again with the same id until `timeout`
    /// passes, and the broker publishes it once whatever number of copies reach it. Cancelling the
    /// task ends the wait with `CancellationError`: a publication still waiting its turn is not
    /// sent; one on its way may be published.
    ///
    /// `force` publishes a lifecycle event the application's state does not expect (the broker
    /// refuses it otherwise, `.conflict`), as `lifeline publish --force` does; a forced publish is
    /// sent on its own, not batched with others.
    /// - Throws: ``LifelineError``: `.unavailable` or `.timeout` when the broker does not answer, `.invalid` for a bad event or payload, `.conflict` in the wrong lifecycle state, `.forbidden` by policy.
    @discardableResult
    public func publish(
        _ event: EventName, _ payload: JSONValue = .emptyObject, acknowledged: Bool = false,
        force: Bool = false, timeout: Duration = .seconds(10)
    ) async throws -> PublishReceipt {
        try await publish(
            PublishedEvent(event, payload: JSONWriter.encode(payload)), acknowledged: acknowledged,
            force: force, timeout: timeout)
    }

    /// ``publish(_:_:acknowledged:force:timeout:)`` for a payload that is JSON text already (a typed event's).
    func publish(_ published: PublishedEvent, acknowledged: Bool, force: Bool = false, timeout: Duration)
        async throws -> PublishReceipt
    {
        try await withTaskExecutorPreference(executor) {
            try await publishAwaited(published, acknowledged: acknowledged, force: force, timeout: timeout)
        }
    }

    private func publishAwaited(
        _ published: PublishedEvent, acknowledged: Bool, force: Bool, timeout: Duration
    ) async throws -> PublishReceipt {
        let event = published.name
        if !acknowledged && !force && PublishCoalescer.Queue.coalesces(event) {
            return try await publishing.publish(published, timeout: timeout)
        }
        let clock = ContinuousClock()
        let deadline = clock.now + timeout
        await publishing.settle()
        try Task.checkCancellation()
        let publish = PublishRequest(
            event: event, payload: published.payload, acknowledged: acknowledged ? true : nil,
            force: force, publishID: publishing.nextID())
        // An acknowledged publish waits for its handlers: one attempt takes the whole time.
        return try await publishUntilAnswered(publish, until: deadline, wholeTime: acknowledged)
    }

    /// Publishes `event` with `payload` (a JSON object) without waiting for its receipt: returns as
    /// soon as the event is queued (it waits only while 100 000 events are queued). Events posted
    /// while an earlier publication is on its way leave together, in order, as one batch, so a loop
    /// of posts runs at the bus's batched rate. Each batch is answered and sent again until
    /// `timeout` when the broker does not answer (it is published once); a refused batch is sent
    /// again event by event, so only the bad events fail. ``flush()`` waits for all of it
    /// and reports what failed (refused, or given up at `timeout`). A posted event that moves the
    /// lifecycle or is acknowledged by its own rule (`willTerminate`…) leaves alone, in its turn,
    /// without waiting for acknowledgements. A task cancelled while it waits for room returns at
    /// once and the event is not sent (``flush()`` reports it).
    public func post(
        _ event: EventName, _ payload: JSONValue = .emptyObject, timeout: Duration = .seconds(10)
    )
        async
    {
        await post(PublishedEvent(event, payload: JSONWriter.encode(payload)), timeout: timeout)
    }

    /// Posts `event` (its payload already JSON text), as ``post(_:_:timeout:)`` does.
    public func post(_ event: PublishedEvent, timeout: Duration = .seconds(10)) async {
        if publishing.tryPost(event, timeout: timeout) { return }
        await publishing.post(event, timeout: timeout)
    }

    /// Waits until everything this client posted before the call has been answered by the broker
    /// (published, refused or given up).
    /// - Throws: ``LifelineError`` for the first posted event that failed since the last flush (its
    ///   name and the broker's reason), with how many failed; `CancellationError` at once when the
    ///   task is cancelled (what was posted stays queued and is sent).
    public func flush() async throws {
        try await publishing.flush()
    }

    /// The Context's findServiceByName: the record, or ``LifelineError`` with status 404.
    /// - Throws: ``LifelineError``: `.unavailable` or `.timeout` when the broker does not answer, `.notFound` when no service has the name.
    public func lookup(_ name: String) async throws -> ServiceRecord {
        try ServiceRecord(bytes: try await request(.lookup(name: name)).body)
    }

    /// Every registered service.
    public func services() async throws -> [ServiceRecord] {
        try ServiceList(bytes: try await request(.list).body).services
    }

    /// Calls `method` of `service` through the broker and returns its answer. A service's own error
    /// arrives unchanged as ``LifelineError``. `service` may name an actor by key, `cart/ana`: the
    /// call goes to the instance its key is placed on.
    /// - Throws: ``LifelineError``: `.unavailable` or `.timeout` when the broker does not answer, `.notFound` for an unknown service or method, or the service's own error with its status and body.
    public func call(
        _ service: String, _ method: String, _ body: JSONValue = .null, timeout: Duration = .seconds(5)
    ) async throws -> JSONValue {
        try await call(service, method, text: JSONWriter.encode(body), timeout: timeout).json()
    }

    /// ``call(_:_:_:timeout:)`` with a body that is JSON text already; the reply as it came.
    func call(_ service: String, _ method: String, text: [UInt8], timeout: Duration) async throws
        -> ControlReply
    {
        let (service, key) = ActorKey.split(service)
        let call = ServiceCall(
            service: service, method: method, key: key, timeoutMilliseconds: timeout.wholeMilliseconds,
            body: text)
        return try await request(.call(call), timeout: timeout + .seconds(1))
    }

    /// Tells the broker that this instance deactivated its actor `key` of `service`; true when the
    /// broker forgot the placement, false when a call to it was on its way (the key stays here).
    func release(service: String, key: String) async throws -> Bool {
        try ReleaseReply(bytes: try await request(.release(service: service, key: key)).body).released
    }

    /// Where the actors by key are placed: of `service`, or of every service.
    /// - Throws: ``LifelineError``: `.notFound` for an unknown service, `.invalid` for one that hosts no
    ///   actors by key, `.unavailable` or `.timeout` when the broker does not answer.
    package func actors(of service: String? = nil) async throws -> [ActorPlacement] {
        let body = try await request(.actors(service: service)).json()
        return try (body["actors"]?.arrayValue ?? []).map { (value) throws(ProtocolError) in
            try ActorPlacement(json: value)
        }
    }

    /// Hands `command` to the connection (the service host's flow control).
    func tell(_ command: ConnectionCommand) { connection.post(command) }

    /// Answers a request the broker delivered (services only).
    func answer(_ reply: ControlReply) { connection.post(.answer(reply)) }

    /// Acknowledges a handled event that asked for it (services only).
    func acknowledge(sequence: UInt64, epoch: UInt64, error: String?) {
        connection.post(.acknowledge(sequence: sequence, epoch: epoch, error: error))
    }

    /// Asks the broker to offer `event` to its handlers one after another and returns their verdict.
    /// - Throws: ``LifelineError``: `.unavailable` or `.timeout` when the broker does not answer, `.invalid` for a bad event or payload, `.forbidden` by policy.
    public func dispatch(
        _ event: EventName, _ payload: JSONValue = .emptyObject, force: Bool = false,
        stepTimeout: Duration? = nil
    ) async throws -> DispatchOutcome {
        let dispatch = DispatchRequest(
            event: event, payload: payload, stepTimeoutMilliseconds: stepTimeout?.wholeMilliseconds,
            force: force)
        var wait = stepTimeout.map { $0 * 20 + .seconds(5) } ?? .seconds(10)
        if EventCatalog.descriptor(for: event)?.completion != nil { wait = max(wait, .seconds(40)) }
        return try DispatchOutcome(bytes: try await request(.dispatch(dispatch), timeout: wait).body)
    }

    /// Unregisters (for services), closes the sockets and waits for the socket thread to end.
    /// First waits until what this client posted has been answered (or given up, at its timeout),
    /// then closes; a publish or post after it fails at once with `.unavailable`.
    public func close() async {
        await publishing.settle()
        publishing.close()
        connection.post(.shutdown)
        await connection.finished()
    }
}
