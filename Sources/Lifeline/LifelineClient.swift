import LifelineProtocol

/// An async client of the broker: publish events, find services, call them.
///
/// The socket lives on its own thread; requests cross to it through a mailbox and replies come back
/// as resumed continuations, so no ZeroMQ call ever runs on the Swift concurrency pool.
public final class LifelineClient: Sendable {
    /// The broker endpoint used when none is given: `LIFELINE_BROKER`, else the broker's default.
    public static var defaultBroker: String { Environment.brokerEndpoint }

    /// The control endpoint this client talks to.
    public let brokerEndpoint: String
    private let connection: ConnectionThread
    private let pending: PendingReplies

    /// Connects to the broker at `broker`.
    public convenience init(broker: String = LifelineClient.defaultBroker) {
        let configuration = ConnectionConfiguration(brokerEndpoint: broker, token: Environment.uniqueToken())
        self.init(configuration: configuration) { _ in }
    }

    /// A client whose session may also register a service or subscribe to the bus; `deliver` gets
    /// everything but request completions, on the socket thread.
    init(
        configuration: ConnectionConfiguration,
        deliver: @escaping @Sendable (ConnectionThread.Delivery) -> Void
    ) {
        let pending = PendingReplies()
        self.pending = pending
        self.brokerEndpoint = configuration.brokerEndpoint
        self.connection = ConnectionThread(configuration: configuration, name: "ll-socket") { delivery in
            switch delivery {
            case .completion(let ticket, let result): pending.resume(ticket, with: result)
            case .finished:
                pending.failAll(LifelineError(.unavailable, "the connection was closed"))
                deliver(delivery)
            default: deliver(delivery)
            }
        }
    }

    deinit { connection.post(.shutdown) }

    /// Sends a raw request and returns the broker's reply; a non-2xx reply throws ``LifelineError``.
    public func request(_ request: ControlRequest, timeout: Duration = .seconds(5)) async throws
        -> ControlReply
    {
        let milliseconds = timeout.wholeMilliseconds
        return try await withCheckedThrowingContinuation { continuation in
            let ticket = pending.park(.continuation(continuation))
            connection.post(.request(request, ticket: ticket, timeoutMilliseconds: max(1, milliseconds)))
        }
    }

    /// Sends a request without waiting: it leaves in call order, and `completion` gets the reply (or
    /// the error) on the socket thread.
    public func send(
        _ request: ControlRequest, timeoutMilliseconds: Int = 5000,
        completion: @escaping @Sendable (Result<ControlReply, LifelineError>) -> Void
    ) {
        let ticket = pending.park(.handler(completion))
        connection.post(.request(request, ticket: ticket, timeoutMilliseconds: max(1, timeoutMilliseconds)))
    }

    /// An operation on the Context's micro-app stack (`op`: start, exit, exitAll, dismiss, popToRoot,
    /// setRoot, action, list, current, find); waits until its callbacks have run and returns the reply.
    public func apps(_ header: JSONValue, timeout: Duration = .seconds(60)) async throws -> JSONValue {
        try await request(ControlRequest(.apps, header: header), timeout: timeout).json()
    }

    /// Where the bus is, the broker's epoch and heartbeat rules.
    public func hello() async throws -> BrokerInfo {
        try BrokerInfo(json: try await request(ControlRequest(.hello)).json())
    }

    /// Publishes `event` with `payload` (a JSON object); returns its sequence and subscriber count.
    @discardableResult
    public func publish(_ event: EventName, _ payload: JSONValue = .emptyObject, acknowledged: Bool = false)
        async throws -> PublishReceipt
    {
        var header: JSONValue = ["event": .string(event.rawValue)]
        if acknowledged { header = ["event": .string(event.rawValue), "ack": true] }
        let reply = try await request(
            ControlRequest(.publish, header: header, payload: JSONWriter.encode(payload)))
        return PublishReceipt(json: try reply.json())
    }

    /// The Context's findServiceByName: the record, or ``LifelineError`` with status 404.
    public func lookup(_ name: String) async throws -> ServiceRecord {
        try ServiceRecord(
            json: try await request(ControlRequest(.lookup, header: ["name": .string(name)])).json())
    }

    /// Every registered service.
    public func services() async throws -> [ServiceRecord] {
        let body = try await request(ControlRequest(.list)).json()
        return try (body["services"]?.arrayValue ?? []).map { (value) throws(ProtocolError) in
            try ServiceRecord(json: value)
        }
    }

    /// Calls `method` of `service` through the broker and returns its answer. A service's own error
    /// arrives unchanged as ``LifelineError``.
    public func call(
        _ service: String, _ method: String, _ body: JSONValue = .null, timeout: Duration = .seconds(5)
    ) async throws -> JSONValue {
        let milliseconds = timeout.wholeMilliseconds
        let request = ControlRequest(
            .call,
            header: [
                "service": .string(service), "method": .string(method),
                "timeoutMs": .int(Int64(milliseconds)),
            ],
            payload: JSONWriter.encode(body))
        return try await self.request(request, timeout: timeout + .seconds(1)).json()
    }

    /// The executor of the connection's socket thread (for the event-handling task).
    var socketExecutor: SocketThreadExecutor { connection.executor }

    /// Answers a request the broker delivered (services only).
    func answer(_ reply: ControlReply) { connection.post(.answer(reply)) }

    /// Acknowledges a handled event that asked for it (services only).
    func acknowledge(sequence: UInt64, epoch: UInt64, error: String?) {
        connection.post(.acknowledge(sequence: sequence, epoch: epoch, error: error))
    }

    /// Asks the broker to offer `event` to its handlers one after another and returns their verdict.
    public func dispatch(
        _ event: EventName, _ payload: JSONValue = .emptyObject, force: Bool = false,
        stepTimeout: Duration? = nil
    ) async throws -> DispatchOutcome {
        var header: [String: JSONValue] = ["event": .string(event.rawValue)]
        if force { header["force"] = true }
        var wait = Duration.seconds(10)
        if let stepTimeout {
            header["timeoutMs"] = .int(Int64(stepTimeout.wholeMilliseconds))
            wait = stepTimeout * 20 + .seconds(5)
        }
        if EventCatalog.descriptor(for: event)?.completion != nil { wait = max(wait, .seconds(40)) }
        let reply = try await request(
            ControlRequest(.dispatch, header: .object(header), payload: JSONWriter.encode(payload)),
            timeout: wait)
        return DispatchOutcome(json: try reply.json())
    }

    /// Unregisters (for services), closes the sockets and waits for the socket thread to end.
    public func close() async {
        connection.post(.shutdown)
        await connection.finished()
    }
}
