import Glibc
import Lifeline
import LifelineProtocol
import LifelineSupport
import ZeroMQ

/// A synchronous client for short-lived tools and dedicated threads (the CLI, benchmark drivers):
/// one DEALER owned by the calling thread, one request at a time. Not for the Swift concurrency pool;
/// use ``LifelineClient`` there.
package final class BlockingClient {
    /// The broker endpoint in use: one of a group's, once the leader is found.
    package var brokerEndpoint: String { members.current }
    /// The broker, or a broker group's members, and which one is in use: the SDK's rule of
    /// leader-following.
    private var members: GroupMembers
    private var socket: ZMQSocket
    private var counter: UInt64 = 0
    /// The CURVE keys of this client, also used by its bus subscribers.
    package let credentials: LifelineClient.Credentials?

    /// Connects (in the background, as ZeroMQ does) to `broker`, with CURVE when `credentials` are
    /// given (by default those of `LIFELINE_KEY` and `LIFELINE_BROKER_KEY`).
    /// - Throws: ``LifelineError`` (`.invalid`) when the socket cannot be made or connected (a bad endpoint).
    @available(*, noasync, message: "BlockingClient blocks its thread: in async code use LifelineClient")
    package init(
        broker: String, credentials: LifelineClient.Credentials? = LifelineClient.Credentials.environment
    ) throws {
        members = GroupMembers(ConnectionConfiguration.split(broker))
        self.credentials = credentials
        socket = try Self.connect(members.current, credentials)
    }

    private static func connect(_ endpoint: String, _ credentials: LifelineClient.Credentials?) throws
        -> ZMQSocket
    {
        do {
            let socket = try ZMQSocket(ZMQContext.shared, type: .dealer)
            // Queue only on a connection that is up, so a missing broker is noticed at once.
            try socket.set(.immediate, 1)
            try credentials?.secure(socket)
            try socket.connect(endpoint)
            return socket
        } catch {
            throw LifelineError(.badRequest, "cannot connect to the broker at \(endpoint): \(error)")
        }
    }

    /// Moves to the member `moved` names now (a group's leader, or the next on the list): the
    /// socket first, then the record of where it is, so that a failed connect changes neither.
    private func reconnect(to moved: GroupMembers) throws {
        let next = try Self.connect(moved.current, credentials)
        socket.close()
        socket = next
        members = moved
    }

    /// How long a request waits for a connection to the broker before it says none answered.
    package static let connectionWait = Duration.milliseconds(800)

    /// Sends `request` and waits up to `timeout` for its reply, whatever its status.
    /// Throws ``LifelineError`` (504) when the broker does not answer in time.
    package func send(_ request: ClientRequest, timeout: Duration = .seconds(5)) throws -> ControlReply {
        guard members.isGroup else {
            let reply = try sendOnce(request, timeout: timeout)
            // One member of a group named alone: a standby's word on the leader is followed once.
            var moved = members
            guard let leader = reply.leaderHint, moved.follow(leader) else { return reply }
            try reconnect(to: moved)
            return try sendOnce(request, timeout: timeout)
        }
        // A group: a member that is down or not connected is skipped, a standby's word on the
        // leader followed; an unanswered request is not sent again (it may have been taken). When
        // every member said no leader is known (an election), the round is tried again after
        // 100 ms until `timeout`: a request a standby refused was not taken.
        let deadline = SystemClock.monotonicNanoseconds() + timeout.wholeNanoseconds
        var tried: Set<String> = []
        while true {
            tried.insert(brokerEndpoint)
            let refusal: Result<ControlReply, LifelineError>
            do {
                let reply = try sendOnce(request, timeout: timeout)
                guard reply.status == .unavailable else { return reply }
                var moved = members
                if let leader = reply.leaderHint, !tried.contains(leader), moved.follow(leader) {
                    try reconnect(to: moved)
                    continue
                }
                refusal = .success(reply)
            } catch let error as LifelineError where error.status == .unavailable {
                refusal = .failure(error)
            }
            var moved = members
            if moved.advance(avoiding: tried) {
                try reconnect(to: moved)
                continue
            }
            guard SystemClock.monotonicNanoseconds() + 100_000_000 < deadline else {
                return try refusal.get()
            }
            usleep(100_000)
            tried = []
        }
    }

    private func sendOnce(_ request: ClientRequest, timeout: Duration) throws -> ControlReply {
        counter += 1
        let id = Array("k\(counter)".utf8)
        let deadline = SystemClock.monotonicNanoseconds() + timeout.wholeNanoseconds
        // Without a connection (no broker, or one that refused our key) a DEALER cannot queue:
        // wait a moment for one instead of blocking for ever.
        try sendWaitingForConnection(request.frames(id: id), until: deadline)
        while true {
            let now = SystemClock.monotonicNanoseconds()
            guard now < deadline else {
                throw LifelineError.unanswered(
                    request.command, milliseconds: timeout.wholeMilliseconds, endpoint: brokerEndpoint)
            }
            // A receive that blocks (up to the deadline) waits inside libzmq with one `poll`;
            // `zmq_poll` and a receive after it would cost three more system calls per request.
            try socket.set(.receiveTimeout, max(1, SystemClock.pollTimeout(until: deadline, now: now)))
            guard let frames = try socket.receiveFrames() else { continue }
            if case .reply(let reply) = try? ControlMessage.decode(frames[...]), reply.requestID == id {
                return reply
            }
        }
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

    /// Sends `frames`, waiting (until `deadline`, and at most ``connectionWait``) for a connection.
    private func sendWaitingForConnection(_ frames: [[UInt8]], until deadline: UInt64) throws {
        let wait = members.isGroup ? Duration.milliseconds(300) : Self.connectionWait
        let start = SystemClock.monotonicNanoseconds()
        let connectionDeadline = min(deadline, start + wait.wholeNanoseconds)
        var writable = ZMQPoller()
        writable.add(socket, events: .writable)
        while try !socket.send(frames: frames, dontWait: true) {
            let now = SystemClock.monotonicNanoseconds()
            guard now < connectionDeadline else {
                // Without a monitor, the CLI sees only that no connection came up (ZMQ_IMMEDIATE).
                let waited =
                    connectionDeadline > start ? (connectionDeadline - start + 500_000) / 1_000_000 : 0
                let keys = credentials == nil ? "" : " (or it refused this client's key)"
                throw LifelineError.noBroker(at: brokerEndpoint, "no connection within \(waited) ms\(keys)")
            }
            try writable.poll(
                timeoutMilliseconds: min(50, SystemClock.pollTimeout(until: connectionDeadline, now: now)))
        }
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
    /// seen the subscription, so no event published afterwards is missed.
    package func subscribe(to subscriptions: [EventName]?, timeout: Duration = .seconds(5)) throws
        -> BusSubscriber
    {
        let info = try hello(timeout: timeout)
        let token = Environment.uniqueToken()
        let subscriber = try BusSubscriber(
            endpoint: BrokerConnection.reachable(info.bus, via: brokerEndpoint), events: subscriptions,
            token: token, credentials: credentials)
        _ = try request(.attach(token: token), timeout: timeout)
        return subscriber
    }
}

/// A SUB socket on the bus owned by the calling thread.
package final class BusSubscriber {
    package let endpoint: String
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
