import LifelineProtocol

/// The broker's Context as a state machine: control messages, bus subscription notices and the clock
/// go in; messages to send and log lines come out. No sockets, no threads: time is an argument, so
/// every rule can be tested with an injected clock.
///
/// Each message is decoded once (``ClientRequest``) and handed to the one feature it belongs to; a
/// reply is routed to the feature that waits for it by one correlator lookup; deadlines expire
/// through one path. Features learn of each other's work only through the core's announcements,
/// delivered after every step in a fixed order.
package struct Broker {
    var core: BrokerCore
    var registry = RegistryFeature()
    var services = ServicesFeature()
    var publishing: PublishFeature
    var dispatch = DispatchFeature()
    var shared = SharedDeliveryFeature()
    var apps: AppsFeature
    var boot: BootFeature
    var nextHeartbeat: MonotonicInstant
    /// When ``tick(now:into:)`` last ran, and when the loop last meant to run it next (what
    /// ``nextDeadline()`` said): a tick well past both means the broker was not running meanwhile.
    var lastTick: MonotonicInstant
    var scheduledTick: MonotonicInstant?
    /// Who may do what, when the broker runs with CURVE and a policy; nil lets every peer do anything.
    package var policy: AccessPolicy? { core.policy }
    /// True when the broker's sockets run CURVE (HELLO says so).
    package var curve: Bool {
        get { core.secure }
        set { core.secure = newValue }
    }
    /// The last PUBLISH and CALL headers and what they decoded to (publishers and callers repeat them).
    private var repeatedHeaders = RequestHeaderCache()
    /// Things worth a log line that happened while the broker was created (e.g. an unreadable state file).
    package private(set) var startupNotes: [String] = []
    /// The journal read at start was damaged (not restored): its file is kept aside before it is
    /// written again.
    package private(set) var journalDamaged = false
    /// Where the broker's group stands (STATS `group`), when it leads one.
    var groupStatus: (() -> StatsReport.Group)?

    /// Creates the Context of a broker that started at `monotonic` (and `wall` nanoseconds since 1970),
    /// with the micro-app stack (`sessions`), boot state, durable journal (`journal`, the bytes of
    /// `journal.log`) and lifecycle state (`lifecycle.json`) saved by a previous life, if any.
    package init(
        configuration: BrokerConfiguration, identity: BrokerIdentity, busEndpoints: [String],
        monotonic: MonotonicInstant, wall: UInt64, sessions: JSONValue? = nil, bootState: JSONValue? = nil,
        journal: [UInt8] = [], lifecycle: JSONValue? = nil
    ) {
        var stack = SessionStack(launcher: configuration.launcherApp)
        if let sessions {
            do {
                stack = try SessionStack(json: sessions, launcher: configuration.launcherApp)
                startupNotes.append(
                    "restored \(stack.sessions.count) micro-app session(s); they wait for their hosts")
            } catch {
                startupNotes.append("ignored the saved micro-app stack (sessions.json): \(error.message)")
            }
        }
        core = BrokerCore(
            configuration: configuration, identity: identity, busEndpoints: busEndpoints,
            monotonic: monotonic,
            wall: wall)
        apps = AppsFeature(stack: stack, saved: sessions)
        if !apps.deferred.isEmpty {
            startupNotes.append(
                "\(apps.deferred.count) micro-app callback(s) of an unfinished change wait for their hosts")
        }
        publishing = PublishFeature(configuration: configuration)
        var (records, length) = JournalRecord.decodeAll(journal)
        if length < journal.count {
            if JournalRecord.isTorn(journal[length...]) {
                startupNotes.append(
                    "dropped the last \(journal.count - length) byte(s) of the journal: a torn record")
            } else {
                // Going on after the last record read would give the numbers of those after it
                // out again: a new epoch says their history is gone.
                startupNotes.append(
                    "the journal is damaged at byte \(length) of \(journal.count) (a whole record that cannot be read, or whose checksum does not match its bytes): it is not restored, and a new epoch begins"
                )
                records = []
                journalDamaged = true
            }
        }
        if let epoch = core.restore(records) {
            publishing.restore(records)
            startupNotes.append(
                "restored \(core.journal.count) journal event(s); epoch \(epoch) goes on after #\(core.sequence)"
            )
            let owed = shared.restore(records, in: &core)
            if owed.names > 0 {
                startupNotes.append(
                    "restored the shared-event position of \(owed.names) service name(s): \(owed.events) event(s) wait for their instances"
                )
            }
        }
        if core.durable { core.output.append(.rewriteJournal(core.journalRecords())) }
        boot = BootFeature(phases: configuration.bootPhases, bootState: bootState)
        if let lifecycle {
            if let state = lifecycle["state"]?.stringValue.flatMap(LifecycleState.init(rawValue:)) {
                core.lifecycle = state
                startupNotes.append("restored the application's lifecycle state: \(state.rawValue)")
            } else {
                startupNotes.append("ignored the saved lifecycle state: it names no known state")
            }
        }
        nextHeartbeat = monotonic + .milliseconds(configuration.heartbeat.intervalMilliseconds)
        lastTick = monotonic
    }

    /// This broker life's epoch.
    package var epoch: UInt64 { core.epoch }
    /// The sequence of the last published event.
    package var sequence: UInt64 { core.sequence }
    /// What the step before the first one asked for (a durable journal rewritten after a restore).
    package mutating func takeStartupOutput() -> [BrokerOutput] {
        defer { core.output.removeAll() }
        return core.output
    }

    /// A peer as log lines name it: its services (and routing id) when it registered any.
    package func peerName(_ peer: [UInt8]) -> String { core.peerName(peer) }

    /// How many services are registered.
    package var serviceCount: Int { core.registry.count }
    /// The application's lifecycle state, moved by published and dispatched events.
    package var lifecycle: LifecycleState { core.lifecycle }

    // MARK: Input

    /// Handles one message from the ROUTER: `peer` is its routing id, `frames` what follows it, `key`
    /// the CURVE public key (Z85) it came with, checked against the policy.
    package mutating func handleControl(
        peer: [UInt8], frames: ArraySlice<[UInt8]>, key: String? = nil, now: MonotonicInstant,
        into output: inout [BrokerOutput]
    ) {
        if let key, core.peerKeys[peer] != key { core.peerKeys[peer] = key }
        step(now, into: &output) { broker in broker.control(peer: peer, frames: frames, key: key) }
    }

    /// Takes a new policy (a reload). A public key the new policy does not list — its entry removed,
    /// or given another key — is revoked: the services it owns are dropped and the peers that spoke
    /// with it are told so (DISCONNECT). A registration the new grants would refuse is dropped too.
    /// Returns what the socket shell must do about connections.
    @discardableResult
    package mutating func apply(
        _ policy: AccessPolicy?, now: MonotonicInstant, into output: inout [BrokerOutput]
    ) -> PolicyChange {
        let previous = core.policy
        core.policy = policy
        guard let policy else { return PolicyChange() }
        var change = PolicyChange()
        for (publicKey, name) in previous?.names ?? [:] {
            guard let grant = policy.grant(publicKey: publicKey) else {
                change.revoked[publicKey] = name
                continue
            }
            if grant.subscribe != previous?.grants[name]?.subscribe {
                change.subscribeChanged.insert(publicKey)
            }
        }
        for key in Set(core.peerKeys.values) where policy.names[key] == nil && change.revoked[key] == nil {
            change.revoked[key] = key
        }
        let revoked = Set(change.revoked.keys)
        let peers = Set(core.peerKeys.filter { revoked.contains($0.value) }.keys)
        step(now, into: &output) { broker in
            broker.registry.revoke(keys: revoked, peers: peers, policy: previous, in: &broker.core)
            // A registration the new policy would refuse (its name or one of its events no longer
            // granted) does not stay either.
            var refused: [String: String] = [:]
            for entry in broker.core.registry.entries.values {
                guard let owner = entry.owner else { continue }
                let registration = entry.registration
                let denial =
                    policy.denial(publicKey: owner, .register(registration.name))
                    ?? registration.events.lazy.compactMap {
                        policy.denial(publicKey: owner, .subscribe($0.rawValue))
                    }.first
                if let denial { refused[registration.name] = denial }
            }
            broker.registry.drop(refused, in: &broker.core)
        }
        for peer in peers { core.peerKeys[peer] = nil }
        return change
    }

    /// The control connections numbered `numbers` closed (libzmq's monitor said so): the instances
    /// that spoke on them get no more calls, and the calls they were answering are sent to another
    /// instance (idempotent ones) or fail at once.
    package mutating func connectionsClosed(
        _ numbers: [UInt32], now: MonotonicInstant, into output: inout [BrokerOutput]
    ) {
        let closed = Set(numbers.filter { $0 != 0 })
        let peers = core.registry.peers.filter { peer in
            peer.count >= 4 && closed.contains(peer.suffix(4).reduce(UInt32(0)) { $0 << 8 | UInt32($1) })
        }
        guard !peers.isEmpty else { return }
        step(now, into: &output) { broker in
            for peer in peers.sorted(by: { $0.lexicographicallyPrecedes($1) }) {
                let names = broker.core.registry.disconnect(peer: peer)
                guard !names.isEmpty else { continue }
                broker.core.log(
                    "\(broker.core.peerName(peer)): its connection has closed; nothing is sent to it until it registers again or its names expire"
                )
                broker.core.announce(.cutOff(peer: peer, names: names))
            }
        }
    }

    /// Handles a subscription notice read from the XPUB socket; `refused` says why the earlier
    /// subscriptions of the connection that sent a marker were refused (its ATTACH reply says so),
    /// `subscriber` the CURVE key of that connection.
    package mutating func handleBusNotice(
        _ notice: [UInt8], refused: [String] = [], subscriber: String? = nil, now: MonotonicInstant,
        into output: inout [BrokerOutput]
    ) {
        step(now, into: &output) { broker in
            broker.registry.busNotice(notice, refused: refused, subscriber: subscriber, in: &broker.core)
        }
    }

    // MARK: Routing

    mutating func step(
        _ now: MonotonicInstant, into output: inout [BrokerOutput], _ body: (inout Broker) -> Void
    ) {
        core.now = now
        swap(&core.output, &output)
        body(&self)
        deliverAnnouncements()
        swap(&core.output, &output)
    }

    private mutating func control(peer: [UInt8], frames: ArraySlice<[UInt8]>, key: String?) {
        let size = frames.reduce(0) { $0 + $1.count }
        if size > core.configuration.maximumMessageBytes {
            if let command = Self.unanswered(frames) {
                core.log(
                    "ignored a \(command) of \(size) bytes from \(core.peerName(peer)): over the limit of \(core.configuration.maximumMessageBytes) bytes"
                )
                return
            }
            let requestID =
                frames.count > 2
                    && frames[frames.startIndex + 2].count <= ControlRequest.maximumRequestIDLength
                ? frames[frames.startIndex + 2] : []
            core.refuse(
                peer,
                ProtocolError(
                    .payloadTooLarge,
                    "message of \(size) bytes exceeds the limit of \(core.configuration.maximumMessageBytes) bytes",
                    requestID: requestID))
            return
        }
        if let (id, typed) = repeatedHeaders.match(frames) {
            core.registry.touch(peer: peer, now: core.nanoseconds)
            admit(typed, id: id, from: peer, key: key)
            return
        }
        let message: ControlMessage
        do {
            message = try ControlMessage.decode(frames)
        } catch {
            if let command = Self.unanswered(frames) {
                core.log("ignored a \(command) from \(core.peerName(peer)): \(error.message)")
            } else {
                core.refuse(peer, error)
            }
            return
        }
        core.registry.touch(peer: peer, now: core.nanoseconds)
        switch message {
        case .reply(let reply): route(reply, from: peer)
        case .request(let request):
            let typed: ClientRequest
            do {
                typed = try ClientRequest.decode(request)
            } catch {
                if request.command == .ack || request.command == .heartbeat {
                    core.log(
                        "ignored a \(request.command.rawValue) from \(core.peerName(peer)): \(error.message)")
                } else {
                    core.refuse(
                        peer, ProtocolError(error.status, error.message, requestID: request.requestID))
                }
                return
            }
            repeatedHeaders.remember(frames, request: request, decoded: typed)
            admit(typed, id: request.requestID, from: peer, key: key)
        }
    }

    /// The command of `frames` when it is one that is never answered, even when malformed (ACK,
    /// HEARTBEAT): the sender reads no reply to it.
    private static func unanswered(_ frames: ArraySlice<[UInt8]>) -> String? {
        guard frames.count > 1, frames[frames.startIndex].elementsEqual(ProtocolID.control.utf8) else {
            return nil
        }
        let command = frames[frames.startIndex + 1]
        if command.elementsEqual("ACK".utf8) { return "ACK" }
        if command.elementsEqual("HEARTBEAT".utf8) { return "HEARTBEAT" }
        return nil
    }

    /// Hands a decoded request to its feature, unless the access policy denies it.
    private mutating func admit(_ typed: ClientRequest, id: [UInt8], from peer: [UInt8], key: String?) {
        if let policy = core.policy, let key, let denial = denial(of: typed, key: key, peer: peer, in: policy)
        {
            let line = "denied \(typed.command.rawValue) from \(core.peerName(peer)): \(denial)"
            if typed.command != .heartbeat && typed.command != .ack {
                core.fail(peer, id, .forbidden, denial, logLine: line)
            } else {
                core.log(line)
            }
            return
        }
        core.requestsHandled &+= 1
        handle(typed, from: peer, id: id)
    }

    private mutating func handle(_ request: ClientRequest, from peer: [UInt8], id: [UInt8]) {
        switch request {
        case .hello, .register, .unregister, .heartbeat, .list, .attach:
            registry.handle(request, from: peer, id: id, in: &core)
        case .lookup, .call, .release, .actors: services.handle(request, from: peer, id: id, in: &core)
        case .acknowledge(let ack):
            // A shared event's ACK ends its delivery; an acknowledged publish may wait for it too.
            if ack.epoch == nil || ack.epoch == core.epoch {
                _ = shared.acknowledged(ack, from: peer, in: &core)
            }
            publishing.handle(request, from: peer, id: id, in: &core)
        case .publish, .replay: publishing.handle(request, from: peer, id: id, in: &core)
        case .dispatch: dispatch.handle(request, from: peer, id: id, in: &core)
        case .apps: apps.handle(request, from: peer, id: id, in: &core)
        case .boot: boot.handle(request, from: peer, id: id, in: &core)
        case .stats:
            let visible = core.peerKeys[peer].flatMap { core.policy?.grant(publicKey: $0) }
            core.reply(peer, id, visible.map { statsReport(visibleTo: $0) } ?? statsReport)
        case .trace(let trace):
            let seconds = trace.seconds
            let until = core.now + .seconds(seconds)
            core.traceUntil = max(core.traceUntil ?? until, until)
            core.reply(peer, id, ["seconds": .int(Int64(seconds))])
        }
    }

    private mutating func route(_ reply: ControlReply, from peer: [UInt8]) {
        guard let wait = core.correlator.take(reply.requestID, from: peer) else {
            let id = String(decoding: reply.requestID, as: UTF8.self)
            if core.correlator.isForeign(reply.requestID, from: peer) {
                let message = "refused a reply to request '\(id)': that request was sent to another peer"
                core.fail(
                    peer, reply.requestID, .forbidden, message,
                    logLine: "\(message) (this one came from \(core.peerName(peer)))")
            } else {
                // Info, not a warning: a call that timed out was logged once already, and its late
                // answer is expected.
                core.log(
                    "a reply to request '\(id)' (status \(reply.status.rawValue)) came after its request ended, or for none; nothing waits for it"
                )
            }
            return
        }
        switch wait.owner {
        case .registry: registry.answered(wait, with: reply, in: &core)
        case .services: services.answered(wait, with: reply, in: &core)
        case .publish: publishing.answered(wait, with: reply, in: &core)
        case .dispatch: dispatch.answered(wait, with: reply, in: &core)
        case .apps: apps.answered(wait, with: reply, in: &core)
        case .boot: boot.answered(wait, with: reply, in: &core)
        }
    }

    mutating func expire(_ wait: Correlator.Entry) {
        switch wait.owner {
        case .registry: registry.expired(wait, in: &core)
        case .services: services.expired(wait, in: &core)
        case .publish: publishing.expired(wait, in: &core)
        case .dispatch: dispatch.expired(wait, in: &core)
        case .apps: apps.expired(wait, in: &core)
        case .boot: boot.expired(wait, in: &core)
        }
    }

    /// Tells every feature what the step announced, in a fixed order (the registry last: it publishes
    /// serviceDidStop once the others have let go of the service), until nothing new is announced.
    mutating func deliverAnnouncements() {
        while !core.announcements.isEmpty {
            let announcement = core.announcements.removeFirst()
            services.react(to: announcement, in: &core)
            shared.react(to: announcement, in: &core)
            publishing.react(to: announcement, in: &core)
            dispatch.react(to: announcement, in: &core)
            apps.react(to: announcement, in: &core)
            boot.react(to: announcement, in: &core)
            registry.react(to: announcement, in: &core)
        }
    }
}
