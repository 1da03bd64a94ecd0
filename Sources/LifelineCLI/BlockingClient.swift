import Lifeline
import LifelineProtocol
import LifelineSupport
import ZeroMQ

/// A synchronous client for short-lived tools and dedicated threads (the CLI, benchmark drivers):
/// one request at a time over the SDK's own connection (``BlockingConnection``), driven by the
/// calling thread. Not for the Swift concurrency pool; use ``LifelineClient`` there.
package final class BlockingClient {
    /// The broker endpoint in use: one of a group's, once the leader is found.
    package var brokerEndpoint: String { connection.endpoint }
    private let connection: BlockingConnection
    /// The CURVE keys of this client, also used by its bus subscribers.
    package let credentials: LifelineClient.Credentials?

    /// Connects (in the background, as ZeroMQ does) to `broker` (one endpoint, or a group's members
    /// separated by commas), with CURVE when `credentials` are given (by default those of
    /// `LIFELINE_KEY` and `LIFELINE_BROKER_KEY`).
    /// - Throws: ``LifelineError`` (400) when the socket cannot be made or connected (a bad endpoint).
    @available(*, noasync, message: "BlockingClient blocks its thread: in async code use LifelineClient")
    package init(
        broker: String, credentials: LifelineClient.Credentials? = LifelineClient.Credentials.environment
    ) throws {
        self.credentials = credentials
        isGroup = broker.contains(",")
        connection = try BlockingConnection(broker: broker, credentials: credentials)
    }

    /// Sends `request` and waits up to `timeout` for its reply, whatever its status. A group's
    /// leader is found and followed, and a request a standby refused is sent to it, as the SDK's
    /// client does (docs/PROTOCOL.md §13).
    /// - Throws: ``LifelineError`` when no reply came: `.timeout` (504) when the broker does not
    ///   answer in time, `.unavailable` when no broker answers, `.forbidden` for a refused key.
    package func send(_ request: ClientRequest, timeout: Duration = .seconds(5)) throws -> ControlReply {
        guard isGroup, let repeatable = repeatable(request) else {
            return try connection.send(request, timeout: timeout)
        }
        // A group's member may take a request and never answer (stopped, or cut off): each attempt
        // waits 1 s, and the connection moves to the next member for the next one, as the SDK's
        // publish does. Only requests the broker answers at once and that are safe to send twice:
        // reads, and a publication that waits for no acknowledgement (given a publishId).
        let start = ContinuousClock.now
        while true {
            let attempt = min(timeout - (ContinuousClock.now - start), .seconds(1))
            let outcome = Result { () throws(LifelineError) in
                try connection.send(repeatable, timeout: attempt)
            }
            guard case .failure(let error) = outcome else {
                let reply = try outcome.get()
                // A standby of a group that is electing its leader: the election, within the time-out
                // (the connection paces its moves 100 ms apart; less than that left, the refusal is
                // the answer).
                if reply.status == .unavailable, reply.standbyRefusal == .noLeader,
                    timeout - (ContinuousClock.now - start) > .milliseconds(100)
                {
                    continue
                }
                return reply
            }
            guard error.status == .timeout || error.isStandbyRefusal else { throw error }
            guard timeout - (ContinuousClock.now - start) > .milliseconds(10) else {
                if error.isStandbyRefusal { throw error }
                throw LifelineError.unanswered(
                    request.command, milliseconds: Int(timeout.wholeMilliseconds), endpoint: brokerEndpoint)
            }
        }
    }

    /// True when the broker endpoint names a group's members.
    private let isGroup: Bool
    /// This client's token: its publications' ids start with it.
    private let token = "cli-" + Environment.uniqueToken()
    /// How many ids this client gave.
    private var issued = 0

    /// `request` made safe to send again (a publication given an id of its own), or nil when it is
    /// not, or may rightly take longer than an attempt: a call or a dispatch (their handlers may
    /// run twice), an acknowledged publication (it waits for its subscribers), an APPS change (it
    /// waits for its callbacks), a boot started or a task run.
    private func repeatable(_ request: ClientRequest) -> ClientRequest? {
        switch request {
        case .hello, .lookup, .list, .stats, .actors, .boot(.report): return request
        case .apps(let operation, _): return operation.isQuery ? request : nil
        case .publish(var publication):
            let acknowledged =
                publication.acknowledged
                ?? (publication.count == 1
                    && EventCatalog.descriptor(for: publication.event)?.requiresAcknowledgement == true)
            guard !acknowledged else { return nil }
            if publication.publishID == nil { publication.publishID = nextID() }
            return .publish(publication)
        default: return nil
        }
    }

    private func nextID() -> String {
        issued += 1
        return "\(token)-\(issued)"
    }

    /// Like ``send(_:timeout:)``, but a non-2xx reply throws ``LifelineError``.
    package func request(_ request: ClientRequest, timeout: Duration = .seconds(5)) throws -> ControlReply {
        let reply = try send(request, timeout: timeout)
        guard reply.status.isSuccess else { throw LifelineError(reply: reply) }
        return reply
    }

    /// HELLO: where the bus is, the epoch, the heartbeat rules.
    /// - Throws: ``LifelineError``: `.unavailable` or `.timeout` when the broker does not answer.
    package func hello(timeout: Duration = .seconds(5)) throws -> BrokerInfo {
        try BrokerInfo(bytes: try request(.hello, timeout: timeout).body)
    }

    /// Publishes `event`; the payload bytes must be a JSON object.
    /// - Throws: ``LifelineError``: `.unavailable` or `.timeout` when the broker does not answer,
    ///   `.invalid` for a bad event or payload, `.forbidden` by policy.
    package func publish(
        _ event: EventName, payload: [UInt8] = Array("{}".utf8), acknowledged: Bool = false,
        timeout: Duration = .seconds(5)
    ) throws -> PublishReceipt {
        try publish(
            PublishRequest(event: event, payload: payload, acknowledged: acknowledged ? true : nil),
            timeout: timeout)
    }

    /// Publishes as `publication` says; returns the receipt (with acknowledgements when asked for).
    package func publish(_ publication: PublishRequest, timeout: Duration = .seconds(5)) throws
        -> PublishReceipt
    {
        try PublishReceipt(body: request(.publish(publication), timeout: timeout).body)
    }

    /// The Context's findServiceByName: the record, or ``LifelineError`` with status 404.
    /// - Throws: ``LifelineError``: `.unavailable` or `.timeout` when the broker does not answer, `.notFound` when no service has the name.
    package func lookup(_ name: String, timeout: Duration = .seconds(5)) throws -> ServiceRecord {
        try ServiceRecord(bytes: try request(.lookup(name: name), timeout: timeout).body)
    }

    /// Every registered service, sorted by name.
    package func services(timeout: Duration = .seconds(5)) throws -> [ServiceRecord] {
        try ServiceList(bytes: try request(.list, timeout: timeout).body).services
    }

    /// Calls a service's method through the broker; the reply comes back whatever its status (a
    /// service's own errors are its answer).
    package func call(_ call: ServiceCall, timeout: Duration = .seconds(5)) throws -> ControlReply {
        try send(.call(call), timeout: timeout)
    }

    /// Offers an event to its handlers in order and returns their verdict.
    package func dispatch(_ dispatch: DispatchRequest, timeout: Duration = .seconds(5)) throws
        -> DispatchOutcome
    {
        try DispatchOutcome(bytes: try request(.dispatch(dispatch), timeout: timeout).body)
    }

    /// An operation on the Context's micro-app stack; the reply once its callbacks have run.
    /// - Throws: ``LifelineError``: `.unavailable` or `.timeout` when the broker does not answer, or the status of a refused operation.
    package func apps(_ operation: AppsRequest, timeout: Duration = .seconds(5)) throws -> JSONValue {
        try request(.apps(operation), timeout: timeout).json()
    }

    /// An operation of the boot loader: its report, starting a boot, running one task.
    package func boot(_ operation: BootRequest, timeout: Duration = .seconds(5)) throws -> JSONValue {
        try request(.boot(operation), timeout: timeout).json()
    }

    /// Opens a SUB on the bus for `subscriptions` (nil: every event) and returns once the broker has
    /// seen the subscription, so no event published afterwards is missed. Subscriptions the broker
    /// refused are in the subscriber's ``BusSubscriber/refused``; the others stand.
    package func subscribe(to subscriptions: [EventName]?, timeout: Duration = .seconds(5)) throws
        -> BusSubscriber
    {
        let info = try hello(timeout: timeout)
        let token = Environment.uniqueToken()
        let subscriber = try BusSubscriber(
            endpoint: BrokerConnection.reachable(info.bus, via: brokerEndpoint), events: subscriptions,
            token: token, credentials: credentials)
        let receipt = try AttachReceipt(bytes: try request(.attach(token: token), timeout: timeout).body)
        subscriber.refused = receipt.refused ?? []
        return subscriber
    }

    /// ``subscribe(to:timeout:)``, refusing a subscription the broker did not apply whole.
    /// - Throws: ``LifelineError``: `.forbidden` naming what the broker refused and why.
    package func subscribeWhole(to subscriptions: [EventName]?, timeout: Duration = .seconds(5)) throws
        -> BusSubscriber
    {
        let subscriber = try subscribe(to: subscriptions, timeout: timeout)
        guard subscriber.refused.isEmpty else {
            throw LifelineError(
                .forbidden,
                "the broker refused this subscription: \(subscriber.refused.joined(separator: "; "))")
        }
        return subscriber
    }
}

/// A SUB socket on the bus owned by the calling thread.
package final class BusSubscriber {
    package let endpoint: String
    /// Why the broker refused subscriptions of this subscriber, one sentence each (its policy does
    /// not let the key read the event): nothing arrives for them.
    package fileprivate(set) var refused: [String] = []
    private let socket: ZMQSocket
    /// Events of a batch not returned yet.
    private var waiting: [BusMessage] = []

    init(endpoint: String, events: [EventName]?, token: String, credentials: LifelineClient.Credentials?)
        throws
    {
        self.endpoint = endpoint
        socket = try ZMQSocket(ZMQContext.shared, type: .sub)
        try socket.set(.receiveHighWaterMark, 0)
        try credentials?.secure(socket)
        try socket.connect(endpoint)
        if let events {
            for event in events { try socket.set(.subscribe, BusMessage.topic(for: event)) }
        } else {
            try socket.set(.subscribe, [])
        }
        try socket.set(.subscribe, Array(("!" + token).utf8))
    }

    /// The next event, waiting up to `timeout` (nil: forever); nil on timeout.
    /// Malformed bus messages throw ``ProtocolError``.
    package func next(timeout: Duration? = nil) throws -> BusMessage? {
        if !waiting.isEmpty { return waiting.removeFirst() }
        var frames = try socket.receiveFrames(dontWait: true)
        if frames == nil {
            var poller = ZMQPoller()
            poller.add(socket)
            guard try poller.poll(timeoutMilliseconds: timeout?.wholeMilliseconds ?? -1) > 0 else {
                return nil
            }
            frames = try socket.receiveFrames(dontWait: true)
        }
        guard let frames else { return nil }
        waiting = try BusMessage.decodeBatch(frames)
        return waiting.isEmpty ? nil : waiting.removeFirst()
    }
}
