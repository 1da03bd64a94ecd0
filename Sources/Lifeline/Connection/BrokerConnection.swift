import LifelineProtocol

/// The client side of the protocol as a state machine (the Paranoid Pirate worker and the Clone
/// subscriber of the ZeroMQ guide): greet the broker, open the bus, register or attach, start from the
/// broker's snapshot, heartbeat both ways, detect a dead broker and reconnect with exponential
/// backoff, resume where it left off, drop duplicates, detect sequence gaps and recover them from the
/// journal, match replies to requests, shut down cleanly. Pure: messages and time in,
/// ``ConnectionEffect``s out.
package struct BrokerConnection {
    /// Where the connection stands.
    enum Phase: Equatable, Sendable {
        case idle
        /// HELLO sent; waiting for the broker to say where the bus is.
        case greeting(deadline: UInt64)
        /// REGISTER or ATTACH sent; waiting for the broker to confirm.
        case joining(deadline: UInt64)
        /// Serving.
        case ready
        /// Lost the broker; trying again at `until`.
        case backingOff(until: UInt64)
        /// UNREGISTER sent at shutdown.
        case leaving(deadline: UInt64)
        case stopped
    }

    enum Internal { case hello, join, unregister, replay, probe }

    struct Outstanding {
        var ticket: UInt64
        var command: Command
        var deadline: UInt64
        var timeoutMilliseconds: Int
        /// The request as sent, to send again: when it was not taken (a standby refused it, or its
        /// socket never reached a broker), and a repeatable one after the broker was lost.
        var frames: [[UInt8]]
        /// Its place in the order of requests.
        var order: UInt64
        /// Sent again after the broker was lost (``ClientRequest/isRepeatable``).
        var repeatable: Bool
        /// Not taken by the broker it went to: sent again once the connection has moved.
        var notTaken = false
        /// How many standbys refused it.
        var refusals = 0
    }

    typealias TopicCursor = TopicCursors.Cursor

    let configuration: ConnectionConfiguration
    /// Whether `configuration` registers a service, kept apart: the loop asks on every turn, and looking
    /// at the optional copies the whole registration.
    let registers: Bool
    let heartbeatInterval: UInt64
    var phase: Phase = .idle
    var busEndpoint: String?
    /// Which of a group's endpoints the connection uses.
    var members: GroupMembers
    /// The endpoint the control socket connects to now.
    var currentEndpoint: String { members.current }
    /// The epoch of the broker the connection last joined.
    var epoch: UInt64?
    /// The highest sequence delivered in this epoch (where a reconnect resumes).
    var lastSequence: UInt64 = 0
    var topics = TopicCursors()
    /// False only in the test that holds the common case (``acceptInOrder(_:receivedAt:into:)`` and
    /// ``accept(_:receivedAt:into:)``'s first branch) to the general path.
    var takesShortcut = true
    /// Bus events held while joining or while a gap is being recovered.
    var held: [BusMessage] = []
    var recovering = false
    /// REPLAY requests not answered yet (live events are held until none is).
    var replaysOutstanding = 0
    /// Since when a REPLAY has waited with no answer to any (see ``replayLimitNanoseconds``).
    var replayWaitingSince: UInt64?
    /// The service's handlers refused an event (``handlersRefused(_:sequence:topicSequence:into:)``):
    /// what is missed meanwhile, asked of the journal again when they have room.
    var pause = HandlerPause()
    var brokerHeartbeat = HeartbeatSettings.standard
    var brokerDeadline = UInt64.max
    var nextHeartbeat = UInt64.max
    /// When ``tick(now:into:)`` last ran (0 before the first), and when the loop meant to run it
    /// next (the ``nextDeadline`` it waited for; without one, an interval after the last): a tick
    /// well past that means this process was not running meanwhile.
    var lastTick: UInt64 = 0
    var plannedTick: UInt64?
    /// The broker's silence was excused since it was last heard from (once between two signs of
    /// life: a broker that died is still left after the next absence).
    var excusedSilence = false
    var backoffMilliseconds: Int
    var hasJoined = false
    /// A taken name is retried once, after its holder would have expired (a restarted service whose
    /// crashed predecessor is still registered); a second refusal is final.
    var retriedConflict = false
    var counter: UInt64 = 0
    var internalRequests: [[UInt8]: Internal] = [:]
    /// When the last REGISTER (or ATTACH) was sent.
    var joinSentAt: UInt64 = 0
    /// When the HELLO sent to learn whether a group's member still leads must be answered.
    var probeDeadline: UInt64?
    /// What the last standby said when it refused this connection's greeting with no leader to
    /// name; a request still waiting to be sent at its time-out fails with it. Kept until a greeting
    /// is answered: a member tried next that never answers leaves the group's last word standing.
    var standbyWithoutLeader: String?
    var outstanding: [[UInt8]: Outstanding] = [:]
    /// A service's requests made while it greets or joins: sent once it is registered, so that the
    /// broker sees them after the registration (a restored micro-app session, say, is back by then).
    var unsent: [(id: [UInt8], frames: [[UInt8]])] = []
    /// The last CALL header the broker forwarded and what it decoded to (calls of one method repeat it).
    var repeatedCalls = RequestHeaderCache()
    /// When ``start(now:into:)`` ran.
    var startedAt: UInt64 = 0
    /// Whether the control socket ever reached a broker, as libzmq's monitor says.
    var linkConnected = false
    /// Whether the control socket open now has reached its broker.
    var linkUp = false
    /// When a link closed under requests last: one that closes again within 100 ms is not connected
    /// again at once (a broker that drops every link a request comes on is not hammered).
    var linkClosedAt: UInt64?
    /// When a connect was first refused while no control socket had ever connected (with a
    /// group: when every member had refused).
    var linkRefusedAt: UInt64?
    /// A group's members that refused the connection since one last accepted it.
    var refusedMembers: Set<String> = []
    /// Why the broker's security handshake refused this client, and when: requests fail at once
    /// for a second after it (then one goes out on a fresh socket, to try again).
    var handshakeRefusal: (error: LifelineError, at: UInt64)?
    /// Whether a handshake ever succeeded: a connection dropped in a later one is a restart, not
    /// a refusal.
    var handshakeSucceeded = false

    init(configuration: ConnectionConfiguration) {
        self.configuration = configuration
        self.members = GroupMembers(configuration.brokerEndpoints)
        self.registers = configuration.registration != nil
        self.heartbeatInterval = configuration.registration?.heartbeat.intervalNanoseconds ?? 0
        self.backoffMilliseconds = configuration.initialBackoffMilliseconds
    }

    /// Where this connection stands on the bus: where a REGISTER resumes. Before the events it holds
    /// (a REPLAY may have delivered later ones of other names meanwhile), so a reconnect gets them.
    var cursor: EventCursor? {
        guard let epoch else { return nil }
        let lowestHeld = held.lazy.map(\.header.sequence).min() ?? .max
        return EventCursor(epoch: epoch, sequence: min(lastSequence, lowestHeld &- 1))
    }

    // MARK: Inputs

    /// Opens the connection.
    mutating func start(now: UInt64, into effects: inout [ConnectionEffect]) {
        guard phase == .idle else { return }
        startedAt = now
        connect(now: now, into: &effects)
    }

    /// The broker was heard from at `now`: its silence is counted from here.
    mutating func heard(at now: UInt64) {
        guard registers else { return }
        brokerDeadline = now &+ brokerHeartbeat.expiryNanoseconds
        excusedSilence = false
    }

    /// Handles one message from the control socket.
    mutating func handleControl(_ frames: [[UInt8]], now: UInt64, into effects: inout [ConnectionEffect]) {
        if let (id, repeated) = repeatedCalls.match(frames[...]), case .call(let call) = repeated {
            heard(at: now)
            effects.append(.deliver(.request(.call(call), id: id)))
            return
        }
        let message: ControlMessage
        do {
            message = try ControlMessage.decode(frames[...])
        } catch {
            effects.append(.deliver(.log("ignored a malformed message from the broker: \(error.message)")))
            return
        }
        heard(at: now)
        switch message {
        case .reply(let reply): handleReply(reply, now: now, into: &effects)
        case .request(let request):
            let typed: BrokerRequest
            do {
                typed = try BrokerRequest.decode(request)
            } catch {
                effects.append(
                    .deliver(.log("refused a \(request.command) from the broker: \(error.message)")))
                let refusal = ControlReply.error(error.status, error.message, requestID: request.requestID)
                effects.append(.sendControl(refusal.frames()))
                return
            }
            switch typed {
            case .heartbeat: break
            case .disconnect(let disconnect):
                switch phase {
                case .leaving, .stopped, .idle: break
                default:
                    let reason = disconnect.reason ?? "no reason given"
                    lose("the broker disconnected us (\(reason))", retryAt: now, now: now, into: &effects)
                }
            case .event(let message) where message.header.flags & 2 != 0:
                // A shared event: this instance's alone, off the bus and outside its cursors.
                effects.append(.deliver(.event(message, receivedAt: now, replayed: false)))
            case .event(let message): replayed(message, into: &effects)
            case .call(let call):
                repeatedCalls.remember(frames[...], request: request, decoded: .call(call))
                effects.append(.deliver(.request(typed, id: request.requestID)))
            case .offer, .app, .intercept, .start, .boot:
                effects.append(.deliver(.request(typed, id: request.requestID)))
            }
        }
    }

    /// Handles one message from the bus socket: one event, or a batch of events of one name.
    /// Returns how many events it carried.
    @discardableResult
    mutating func handleBus(
        _ frames: [[UInt8]], receivedAt: UInt64 = 0, into effects: inout [ConnectionEffect]
    ) -> Int {
        handleBus(receivedAt: receivedAt, into: &effects) { () throws(ProtocolError) in
            try BusMessage.decodeBatch(frames)
        }
    }

    /// Handles one message from the bus socket that `decode` decodes (a socket thread decodes the
    /// frames where libzmq received them). Returns how many events it carried.
    @discardableResult
    mutating func handleBus(
        receivedAt: UInt64 = 0, into effects: inout [ConnectionEffect],
        decode: () throws(ProtocolError) -> [BusMessage]
    ) -> Int {
        let messages: [BusMessage]
        do {
            messages = try decode()
        } catch {
            effects.append(.deliver(.log("ignored a malformed bus message: \(error.message)")))
            return 0
        }
        // A bus message carries one name: its events that each come next move the cursor at once.
        let inOrder = acceptInOrder(messages, receivedAt: receivedAt, into: &effects)
        for message in messages[inOrder...] {
            if case .joining = phase {
                held.append(message)
            } else if recovering {
                held.append(message)
            } else {
                accept(message, receivedAt: receivedAt, into: &effects)
            }
        }
        return messages.count
    }

    /// Sends an application request; its answer arrives as ``ConnectionEvent/completion(ticket:_:)``.
    mutating func submit(
        _ request: ClientRequest, ticket: UInt64, timeoutMilliseconds: Int, now: UInt64,
        into effects: inout [ConnectionEffect]
    ) {
        if let refusal = refusalBeforeSending(now: now, into: &effects) {
            effects.append(.deliver(.completion(ticket: ticket, .failure(refusal))))
            return
        }
        switch phase {
        // A plain client backs off only to move within a group: its requests wait for the move.
        case .backingOff where request.isRepeatable || !configuration.joins: break
        case .backingOff(let until):
            let seconds = Double((until &- now) / 1_000_000) / 1000
            let error = LifelineError(
                .unavailable,
                "not connected to the broker at \(currentEndpoint) (retrying in \(seconds) s)")
            effects.append(.deliver(.completion(ticket: ticket, .failure(error))))
            return
        case .stopped, .leaving:
            effects.append(
                .deliver(
                    .completion(
                        ticket: ticket, .failure(LifelineError(.unavailable, "the connection is closing")))))
            return
        default: break
        }
        let id = nextID("c")
        let frames = request.frames(id: id)
        outstanding[id] = Outstanding(
            ticket: ticket, command: request.command,
            deadline: now &+ UInt64(timeoutMilliseconds) * 1_000_000,
            timeoutMilliseconds: timeoutMilliseconds, frames: frames, order: counter,
            repeatable: request.isRepeatable)
        switch phase {
        case .backingOff:
            outstanding[id]?.notTaken = true
            unsent.append((id, frames))
        case .greeting, .joining:
            if registers {
                outstanding[id]?.notTaken = true
                unsent.append((id, frames))
            } else {
                effects.append(.sendControl(frames))
            }
        default: effects.append(.sendControl(frames))
        }
    }

    /// Forgets the request `ticket` (its task was cancelled): not sent if it waits to be, and its
    /// answer, if one comes, is dropped.
    mutating func cancel(ticket: UInt64) {
        guard let id = outstanding.first(where: { $0.value.ticket == ticket })?.key else { return }
        outstanding[id] = nil
        unsent.removeAll { $0.id == id }
    }

    /// Sends the application's answer to a request the broker delivered.
    func answer(_ reply: ControlReply, into effects: inout [ConnectionEffect]) {
        effects.append(.sendControl(reply.frames()))
    }

    /// Tells the broker an acknowledged event was handled (with the handler's error, if it failed).
    func acknowledge(
        sequence: UInt64, epoch ackEpoch: UInt64, error: String?, into effects: inout [ConnectionEffect]
    ) {
        guard let name = configuration.registration?.name, phase == .ready, ackEpoch == epoch else { return }
        let ack = Acknowledgement(sequence: sequence, epoch: ackEpoch, service: name, error: error)
        effects.append(.sendControl(ack.frames(id: [])))
    }

    /// Unregisters (when registered) and then finishes.
    mutating func shutdown(now: UInt64, into effects: inout [ConnectionEffect]) {
        guard let registration = configuration.registration, phase == .ready else {
            finish(into: &effects)
            return
        }
        probeDeadline = nil
        let id = nextID("s")
        internalRequests[id] = .unregister
        let request = ClientRequest.unregister(
            UnregisterRequest(name: registration.name, instance: registration.instance))
        effects.append(.sendControl(request.frames(id: id)))
        phase = .leaving(deadline: now &+ UInt64(configuration.unregisterTimeoutMilliseconds) * 1_000_000)
    }

    /// The bus endpoint as this client can reach it: a wildcard host (`0.0.0.0`, `*`) announced by the
    /// broker is replaced by the host of the control endpoint.
    package static func reachable(_ bus: String, via control: String) -> String {
        guard bus.hasPrefix("tcp://"), control.hasPrefix("tcp://") else { return bus }
        let busAddress = bus.dropFirst(6)
        guard let colon = busAddress.lastIndex(of: ":") else { return bus }
        let host = busAddress[..<colon]
        guard host == "0.0.0.0" || host == "*" || host == "[::]" else { return bus }
        let controlAddress = control.dropFirst(6)
        guard let controlColon = controlAddress.lastIndex(of: ":") else { return bus }
        return "tcp://\(controlAddress[..<controlColon])\(busAddress[colon...])"
    }
}
