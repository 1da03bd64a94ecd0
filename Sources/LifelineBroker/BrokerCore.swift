import LifelineProtocol

/// The broker's Context as a state machine: control messages, bus subscription notices and the clock
/// go in; messages to send and log lines come out. No sockets, no threads: time is an argument
/// (monotonic nanoseconds), so every rule can be tested with an injected clock.
///
/// The commands live in extensions by topic: registry (`+Registry`), publishing, acknowledgements and
/// replay (`+Publish`), calls (`+Calls`) and ordered dispatch (`+Dispatch`).
public struct BrokerCore {
    enum AttachWaiter {
        case attach(peer: [UInt8], requestID: [UInt8])
        case register(
            peer: [UInt8], requestID: [UInt8], ServiceRegistration, resume: (epoch: UInt64, sequence: UInt64)?
        )
    }

    public let configuration: BrokerConfiguration
    public let identity: BrokerIdentity
    /// The endpoints the bus actually listens on (wildcards resolved); the first is announced.
    public let busEndpoints: [String]
    let startMonotonic: UInt64
    let startWall: UInt64

    var registry = ServiceRegistry()
    var calls = PendingCalls()
    var attachments = AttachTracker<AttachWaiter>()
    var sequencer: EventSequencer
    var journal: EventJournal
    var acknowledgements = PendingAcknowledgements()
    var dispatches = DispatchTable()
    var starts = ServiceStarts()
    var stack: SessionStack
    var appQueue: [AppOperation] = []
    var appTransition: AppTransition?
    var appCounter: UInt64 = 0
    /// The current or last boot.
    var boot: BootRun?
    /// Run-once tasks that ran in some boot (kept in `boot.json`).
    var runOnceDone: Set<String> = []
    /// Tasks run by hand (`lifeline boot run`) since the last boot started.
    var ranOnDemand: Set<String> = []
    var bootCounter: UInt64 = 0
    var onDemandRuns: [[UInt8]: (peer: [UInt8], requestID: [UInt8], task: BootTask)] = [:]
    /// Things worth a log line that happened while the core was created (e.g. an unreadable state file).
    public private(set) var startupNotes: [String] = []
    /// The application's lifecycle state, moved by published and dispatched events.
    public internal(set) var lifecycle = LifecycleState.notRunning
    private var nextHeartbeat: UInt64

    /// Creates the Context of a broker that started at `monotonic` / `wall` (nanoseconds), with the
    /// micro-app stack saved by a previous life (`sessions`), if any.
    public init(
        configuration: BrokerConfiguration, identity: BrokerIdentity, busEndpoints: [String],
        monotonic: UInt64,
        wall: UInt64, sessions: JSONValue? = nil, bootState: JSONValue? = nil
    ) {
        runOnceDone = Set((bootState?["runOnce"]?.arrayValue ?? []).compactMap(\.stringValue))
        var notes: [String] = []
        var stack = SessionStack(launcher: configuration.launcherApp)
        if let sessions {
            do {
                stack = try SessionStack(json: sessions, launcher: configuration.launcherApp)
                notes.append(
                    "restored \(stack.sessions.count) micro-app session(s); they wait for their hosts")
            } catch {
                notes.append("ignored the saved sessions: \(error.message)")
            }
        }
        self.stack = stack
        self.startupNotes = notes
        self.configuration = configuration
        self.identity = identity
        self.busEndpoints = busEndpoints
        self.startMonotonic = monotonic
        self.startWall = wall
        self.sequencer = EventSequencer(epoch: wall & 0x7FFF_FFFF_FFFF_FFFF)
        self.journal = EventJournal(
            capacity: configuration.journalCapacity,
            maximumAgeMilliseconds: configuration.journalMaximumAgeMilliseconds)
        self.nextHeartbeat = monotonic &+ configuration.heartbeat.intervalNanoseconds
    }

    /// This broker life's epoch.
    public var epoch: UInt64 { sequencer.epoch }
    /// The sequence of the last published event.
    public var sequence: UInt64 { sequencer.sequence }
    /// How many services are registered.
    public var serviceCount: Int { registry.count }

    func wall(at now: UInt64) -> UInt64 { startWall &+ (now &- startMonotonic) }

    // MARK: Input

    /// Handles one message from the ROUTER: `peer` is its routing id, `frames` what follows it.
    public mutating func handleControl(
        peer: [UInt8], frames: ArraySlice<[UInt8]>, now: UInt64, into output: inout [BrokerOutput]
    ) {
        let size = frames.reduce(0) { $0 + $1.count }
        if size > configuration.maximumMessageBytes {
            let requestID =
                frames.count > 2 && frames[frames.startIndex + 2].count <= 255
                ? frames[frames.startIndex + 2] : []
            refuse(
                peer,
                ProtocolError(
                    .payloadTooLarge,
                    "message of \(size) bytes exceeds the limit of \(configuration.maximumMessageBytes) bytes",
                    requestID: requestID), into: &output)
            return
        }
        let message: ControlMessage
        do {
            message = try ControlMessage.decode(frames)
        } catch {
            refuse(peer, error, into: &output)
            return
        }
        registry.touch(peer: peer, now: now)
        switch message {
        case .reply(let reply):
            if dispatches.isOffer(reply.requestID) {
                handleOfferReply(reply, from: peer, now: now, into: &output)
            } else if isAppReply(reply.requestID) {
                handleAppReply(reply, now: now, into: &output)
            } else if isBootReply(reply.requestID) {
                handleBootReply(reply, now: now, into: &output)
            } else if handleOnDemandReply(reply, into: &output) {
                return
            } else if starts.service(answering: reply.requestID) != nil {
                handleStartReply(reply, now: now, into: &output)
            } else {
                forwardServiceReply(reply, from: peer, into: &output)
            }
        case .request(let request): handleRequest(request, from: peer, now: now, into: &output)
        }
    }

    /// Handles a subscription notice read from the XPUB socket.
    public mutating func handleBusNotice(_ notice: [UInt8], now: UInt64, into output: inout [BrokerOutput]) {
        guard let marker = AttachTracker<AttachWaiter>.token(inNotice: notice) else { return }
        guard marker.subscribed else {
            attachments.markerUnsubscribed(marker.token)
            return
        }
        for waiter in attachments.markerSubscribed(marker.token, now: now) {
            switch waiter {
            case .attach(let peer, let requestID): replyAttached(peer, requestID, into: &output)
            case .register(let peer, let requestID, let registration, let resume):
                completeRegistration(
                    registration, resume: resume, peer: peer, requestID: requestID, now: now, into: &output)
            }
        }
    }

    /// Runs every timer that is due: heartbeats, service expiry, deadlines of calls, attaches,
    /// acknowledgements and dispatch steps.
    public mutating func tick(now: UInt64, into output: inout [BrokerOutput]) {
        for entry in registry.removeExpired(now: now) {
            let silence = entry.registration.heartbeat.expiryNanoseconds / 1_000_000
            output.append(
                .log(
                    "service \(entry.registration.name) (pid \(entry.registration.pid)) expired: silent for \(silence) ms"
                ))
            serviceStopped(entry.registration, reason: "expired", now: now, into: &output)
        }
        expireCalls(now: now, into: &output)
        expireAttachments(now: now, into: &output)
        for entry in acknowledgements.removeExpired(now: now) { replyAcknowledged(entry, into: &output) }
        expireOffers(now: now, into: &output)
        expireStarts(now: now, into: &output)
        expireAppCallback(now: now, into: &output)
        expireBoot(now: now, into: &output)
        journal.trim(now: now)
        if now >= nextHeartbeat {
            for peer in registry.peers { output.append(.send(peer: peer, frames: Self.heartbeatFrames)) }
            nextHeartbeat = now &+ configuration.heartbeat.intervalNanoseconds
        }
    }

    /// When ``tick(now:into:)`` next has work, in monotonic nanoseconds.
    public var nextDeadline: UInt64 {
        [
            nextHeartbeat, registry.nextExpiry.map { $0 &+ 1 }, calls.nextDeadline, attachments.nextDeadline,
            acknowledgements.nextDeadline, dispatches.nextDeadline, starts.nextDeadline,
            appTransition?.awaiting?.deadline, bootDeadline,
        ].compactMap { $0 }.min()!
    }

    /// Tells every registered service that the broker is leaving.
    public func shutdown(reason: String, into output: inout [BrokerOutput]) {
        let request = ControlRequest(.disconnect, header: ["reason": .string(reason)])
        for peer in registry.peers { output.append(.send(peer: peer, frames: request.frames())) }
    }

    static let heartbeatFrames = ControlRequest(.heartbeat).frames()

    // MARK: Requests

    mutating func handleRequest(
        _ request: ControlRequest, from peer: [UInt8], now: UInt64, into output: inout [BrokerOutput]
    ) {
        switch request.command {
        case .heartbeat:
            if !registry.isKnown(peer: peer) && !attachments.isWaiting({ $0.isRegistration(of: peer) }) {
                let disconnect = ControlRequest(
                    .disconnect, header: ["reason": "unknown peer: register again"])
                output.append(.send(peer: peer, frames: disconnect.frames()))
            }
        case .hello: send(peer, ControlReply(requestID: request.requestID, json: helloBody), into: &output)
        case .register: register(request, from: peer, now: now, into: &output)
        case .unregister: unregister(request, from: peer, now: now, into: &output)
        case .lookup: lookup(request, from: peer, now: now, into: &output)
        case .list: list(request, from: peer, now: now, into: &output)
        case .attach: attach(request, from: peer, now: now, into: &output)
        case .call: call(request, from: peer, now: now, into: &output)
        case .publish: publish(request, from: peer, now: now, into: &output)
        case .ack: acknowledge(request, from: peer, into: &output)
        case .replay: replay(request, from: peer, into: &output)
        case .dispatch: startDispatch(request, from: peer, now: now, into: &output)
        case .apps: apps(request, from: peer, now: now, into: &output)
        case .boot: bootRequest(request, from: peer, now: now, into: &output)
        default:
            refuse(
                peer,
                ProtocolError(
                    .badRequest, "\(request.command) is sent by the broker only", requestID: request.requestID
                ), into: &output)
        }
    }

    // MARK: Helpers

    func deadline(_ now: UInt64, _ milliseconds: Int) -> UInt64 { now &+ UInt64(milliseconds) * 1_000_000 }

    func send(_ peer: [UInt8], _ reply: ControlReply, into output: inout [BrokerOutput]) {
        output.append(.send(peer: peer, frames: reply.frames()))
    }

    func refuse(_ peer: [UInt8], _ error: ProtocolError, into output: inout [BrokerOutput]) {
        output.append(.log("refused a message from peer \(Self.describe(peer)): \(error.message)"))
        send(peer, ControlReply.error(error.status, error.message, requestID: error.requestID), into: &output)
    }

    /// Reads an optional integer header field within `range`; the error names the command and field.
    func integer(_ request: ControlRequest, _ field: String, in range: ClosedRange<Int>) throws(ProtocolError)
        -> Int?
    {
        guard let value = request.header[field] else { return nil }
        guard let number = value.intValue, range.contains(Int(number)) else {
            throw ProtocolError(
                .badRequest,
                "\(request.command) \(field) must be an integer within \(range.lowerBound)...\(range.upperBound)",
                requestID: request.requestID)
        }
        return Int(number)
    }

    /// A routing id as hex, for log lines.
    static func describe(_ peer: [UInt8]) -> String {
        peer.map { byte in
            let digits = String(byte, radix: 16)
            return digits.count == 1 ? "0" + digits : digits
        }.joined()
    }
}

extension BrokerCore.AttachWaiter {
    func isRegistration(of peer: [UInt8]) -> Bool {
        if case .register(let waiting, _, _, _) = self { return waiting == peer }
        return false
    }
}
