import LifelineProtocol

/// What every feature shares: the registry, the sequencer and journal of the bus, the lifecycle
/// state, which services have started, and the one correlator of waiting requests; plus the step's
/// clock, output and announcements. Features change it only through these members.
struct BrokerCore {
    /// Where a service stands with its start hook.
    enum StartState { case starting, started }

    let configuration: BrokerConfiguration
    let identity: BrokerIdentity
    /// The endpoints the bus actually listens on (wildcards resolved); the first is announced.
    let busEndpoints: [String]
    let startMonotonic: MonotonicInstant
    let startWall: UInt64

    var registry = ServiceRegistry()
    var sequencer: EventSequencer
    var journal: EventJournal
    var lifecycle = LifecycleState.notRunning {
        didSet {
            if persistsLifecycle && lifecycle != oldValue {
                persist("lifecycle.json", ["state": .string(lifecycle.rawValue)])
            }
        }
    }
    /// True with a state directory (and in a group's leader): every change of ``lifecycle`` is saved
    /// (in a group, replicated) in `lifecycle.json`, so that the next life (a restarted broker, a new
    /// leader) goes on in the application's state.
    let persistsLifecycle: Bool
    var correlator = Correlator()
    var starts: [String: StartState] = [:]
    /// True once a boot has run (or settled): a service that registers now starts at once.
    var servicesStartAtOnce = false
    /// Journal records go to the state directory too (it has one and the journal keeps events).
    let durable: Bool
    /// Records appended to the durable journal since it was last rewritten.
    private var recordsSinceRewrite = 0

    /// The instant of the step being run.
    var now: MonotonicInstant
    /// Control requests decoded and let through (denied and malformed ones not counted).
    var requestsHandled: UInt64 = 0
    var stats = BrokerStats()
    /// When this broker life began.
    let startedAt: MonotonicInstant
    /// Until when dispatch steps and calls are published on the bus (a TRACE lease).
    var traceUntil: MonotonicInstant?
    var tracing: Bool { traceUntil.map { now < $0 } ?? false }
    /// True when the sockets run CURVE.
    var secure = false
    /// Who may do what, when the broker runs with CURVE and a policy; nil lets every peer do anything.
    var policy: AccessPolicy?
    /// The CURVE public key (Z85) each peer authenticated with, as its messages say.
    var peerKeys: [[UInt8]: String] = [:]
    /// What the step asks the socket shell to do.
    var output: [BrokerOutput] = []
    /// A group leader's first moments, or a broker's started again on its state directory: since
    /// when, until when a LOOKUP or CALL of a service not registered yet is answered 503 (its service
    /// is likely registering again) rather than 404, and why.
    var rejoining: (since: MonotonicInstant, until: MonotonicInstant, after: RejoinCause)?

    /// Why services are registering again.
    enum RejoinCause: String {
        /// A group's new leader (no key is placed anew until its window ends).
        case takeover = "took over its group"
        /// A broker started on a state directory an earlier life left.
        case restart = "started again on its state directory"
    }
    /// What the step tells the features, in order.
    var announcements: [Announcement] = []
    /// The names each event goes to `shared` (one instance each), kept by `SharedDeliveryFeature`.
    var sharedRoutes: [EventName: Set<String>] = [:]
    /// Each name's `shared` events waiting and in flight, and its position in them.
    var sharedQueues: [String: SharedQueue] = [:]

    init(
        configuration: BrokerConfiguration, identity: BrokerIdentity, busEndpoints: [String],
        monotonic: MonotonicInstant, wall: UInt64
    ) {
        self.configuration = configuration
        self.identity = identity
        self.busEndpoints = busEndpoints
        self.startMonotonic = monotonic
        self.startWall = wall
        self.now = monotonic
        startedAt = monotonic
        self.durable = configuration.stateDirectory != nil && configuration.journalCapacity > 0
        persistsLifecycle = configuration.stateDirectory != nil
        self.sequencer = EventSequencer(epoch: wall & 0x7FFF_FFFF_FFFF_FFFF)
        self.journal = EventJournal(
            capacity: configuration.journalCapacity,
            maximumAgeMilliseconds: configuration.journalMaximumAge.wholeMilliseconds,
            maximumBytes: configuration.journalMaximumBytes)
    }

    /// Goes on from a durable journal: its epoch, its sequence, its topic positions and events.
    /// Returns the epoch it goes on with, if the journal had one.
    mutating func restore(_ records: [JournalRecord]) -> UInt64? {
        var restored: UInt64?
        for record in records {
            switch record {
            case .event(let message, _, _, _): restored = message.header.epoch
            case .topics(_, let epoch, _): restored = epoch
            case .sharedCursor, .sharedHandled: break
            }
        }
        guard let restored else { return nil }
        journal.restore(records, now: now.nanoseconds, wall: wall(at: now))
        sequencer = EventSequencer(continuing: restored, after: journal.lastSequence, topics: journal.topics)
        return restored
    }

    var epoch: UInt64 { sequencer.epoch }
    var sequence: UInt64 { sequencer.sequence }
    /// The step's instant as monotonic nanoseconds, for the pure tables that count in them.
    var nanoseconds: UInt64 { now.nanoseconds }
    var bus: String { busEndpoints.first ?? "" }

    /// Wall-clock nanoseconds at monotonic `instant`.
    func wall(at instant: MonotonicInstant) -> UInt64 {
        startWall &+ (instant.nanoseconds &- startMonotonic.nanoseconds)
    }

    /// Wall-clock milliseconds now, as the micro-app stack records times.
    var wallMilliseconds: Int64 { Int64(wall(at: now) / 1_000_000) }

    /// The instant `milliseconds` from now.
    func deadline(_ milliseconds: Int) -> MonotonicInstant { now + .milliseconds(milliseconds) }

    /// The instant `duration` from now.
    func deadline(_ duration: Duration) -> MonotonicInstant { now + duration }

    func isStarted(_ service: String) -> Bool { starts[service] == .started }

    // MARK: Output

    mutating func announce(_ announcement: Announcement) { announcements.append(announcement) }

    mutating func log(_ line: String) { output.append(.log(line)) }

    mutating func send(_ peer: [UInt8], _ reply: ControlReply) {
        output.append(.send(peer: peer, frames: reply.frames()))
    }

    mutating func send(_ peer: [UInt8], _ request: BrokerRequest, id: [UInt8] = []) {
        output.append(.send(peer: peer, frames: request.frames(id: id)))
    }

    /// Sends a message already in frames (a hot path that writes its own).
    mutating func send(_ peer: [UInt8], frames: [[UInt8]]) {
        output.append(.send(peer: peer, frames: frames))
    }

    mutating func reply(_ peer: [UInt8], _ id: [UInt8], _ json: JSONValue) {
        send(peer, ControlReply(requestID: id, json: json))
    }

    /// Answers with a record declared once, written straight to bytes.
    mutating func reply(_ peer: [UInt8], _ id: [UInt8], _ record: some WireRecord) {
        send(peer, ControlReply(requestID: id, status: .ok, body: record.bytes))
    }

    /// Answers a request with an error. A refusal of what the request asked (400, 403, 409, 413,
    /// 422) is logged too, once: `logLine` when given, else the status and `message`.
    mutating func fail(
        _ peer: [UInt8], _ id: [UInt8], _ status: Status, _ message: String, logLine: String? = nil
    ) {
        if Self.loggedRefusals.contains(status.rawValue) {
            log(logLine ?? "refused a request from \(peerName(peer)): \(status.rawValue) \(message)")
        }
        send(peer, ControlReply.error(status, message, requestID: id))
    }

    /// What a request is refused with for what it asked (not 404, an answer about the registry, nor
    /// 429, 503 and 504, about the moment).
    static let loggedRefusals: Set<Int> = [400, 403, 409, 413, 422]

    /// Answers a LOOKUP or CALL of `name`, which no service registered: 404, or 503 while services
    /// are registering again with a group's new leader or a restarted broker.
    mutating func failMissingService(_ peer: [UInt8], _ id: [UInt8], _ name: String) {
        if let rejoining, now < rejoining.until {
            fail(
                peer, id, .unavailable,
                "no service named '\(name)' has registered yet: this broker \(rejoining.after.rawValue) \((now - rejoining.since).wholeMilliseconds) ms ago and services are registering again; retry"
            )
            return
        }
        fail(
            peer, id, .notFound,
            "no service named '\(name)'\(Suggestion.phrase(for: name, in: registry.entries.keys))")
    }

    /// Answers a request the broker cannot accept, with one log line.
    mutating func refuse(_ peer: [UInt8], _ error: ProtocolError) {
        log("refused a message from peer \(Self.describe(peer)): \(error.message)")
        send(peer, ControlReply.error(error.status, error.message, requestID: error.requestID))
    }

    mutating func persist(_ file: String, _ document: JSONValue) {
        output.append(.persist(file: file, document: document))
    }

    // MARK: The bus

    /// Stamps, journals (durably first, with a state directory) and publishes one event.
    @discardableResult
    mutating func publish(
        _ name: EventName, payload: [UInt8], flags: UInt64 = 0, publishID: String? = nil,
        subscribers: Int = 0,
        batch: Int = 1
    ) -> BusHeader {
        publish(
            name, payloads: CollectionOfOne(payload), flags: flags, publishID: publishID,
            subscribers: subscribers, batch: batch)
    }

    /// Stamps, journals (durably first, with a state directory) and publishes a run of events of one
    /// name (at least one), in order, looking the name up once for the whole run: `publishID` and
    /// `batch` are the run's last event's (the others have none, and 1). Returns the last event's
    /// header.
    @discardableResult
    mutating func publish(
        _ name: EventName, payloads: some Collection<[UInt8]>, flags: UInt64 = 0, publishID: String? = nil,
        subscribers: Int = 0, batch: Int = 1
    ) -> BusHeader {
        let count = payloads.count
        precondition(count > 0, "a run of events holds at least one")
        var header = sequencer.next(
            name, count: count, flags: flags, wall: wall(at: now), monotonic: now.nanoseconds)
        let shared = sharedRoutes.isEmpty ? nil : sharedRoutes[name]
        var remaining = count
        for payload in payloads {
            remaining -= 1
            let isLast = remaining == 0
            let message = BusMessage(name: name, header: header, payload: payload)
            journal.hold(
                message, now: now.nanoseconds, publishID: isLast ? publishID : nil, subscribers: subscribers,
                batch: isLast ? batch : 1)
            // The name's position is noted once, after the run's last event (announcements, the
            // shared queues', are handled after the step).
            if isLast { journal.noteTopic(of: message) }
            if durable {
                output.append(
                    .record(
                        JournalRecord.event(
                            message, publishID: isLast ? publishID : nil, subscribers: subscribers,
                            batch: isLast ? batch : 1
                        ).encoded()))
                countRecord(within: message)
            }
            output.append(.publish(message))
            if let shared { announce(.sharedEvent(message, names: shared)) }
            if !isLast { header = header.following }
        }
        stats.published &+= UInt64(count)
        stats.delivered &+= UInt64(subscribers) &* UInt64(count)
        return header
    }

    /// Appends `record` to the durable journal, when there is one.
    mutating func journalRecord(_ record: JournalRecord) {
        guard durable else { return }
        output.append(.record(record.encoded()))
        countRecord()
    }

    /// Rewrites the durable journal once it holds twice what it must (and 1024 records more).
    /// `within`: the event just recorded, when it may be in the middle of a run, whose name's
    /// position is otherwise noted after the run's last event: a rewrite notes it first.
    private mutating func countRecord(within run: BusMessage? = nil) {
        recordsSinceRewrite += 1
        if recordsSinceRewrite > 2 * journal.capacity + 1024 {
            recordsSinceRewrite = 0
            if let run { journal.noteTopic(of: run) }
            output.append(.rewriteJournal(journalRecords()))
        }
    }

    /// Everything the durable journal must hold, encoded: the events and topic positions, then each
    /// name's position in its shared events.
    func journalRecords() -> [UInt8] {
        let cursors = sharedQueues.sorted { $0.key < $1.key }.map {
            JournalRecord.sharedCursor($1.cursor(name: $0))
        }
        return (journal.records(epoch: epoch) + cursors).flatMap { $0.encoded() }
    }

    /// Publishes an event only the broker may publish.
    mutating func publishRuntime(_ name: EventName, _ payload: JSONValue) {
        publish(name, payload: JSONWriter.encode(payload))
    }

    /// The last sequence and topic sequence of each of `names` that was ever published.
    func topicPositions(for names: [EventName]) -> TopicPositions {
        var positions: [EventName: TopicPositions.Position] = [:]
        for name in names {
            guard let state = journal.topics[name] else { continue }
            positions[name] = TopicPositions.Position(
                sequence: state.sequence, topicSequence: state.topicSequence)
        }
        return TopicPositions(positions)
    }

    /// The registry's record of `entry`, as LOOKUP and LIST show it.
    func record(of entry: ServiceRegistry.Entry) -> ServiceRecord {
        var record = ServiceRecord(
            registration: entry.registration,
            registeredAtMilliseconds: Int64(
                wall(at: MonotonicInstant(nanoseconds: entry.registeredAt)) / 1_000_000),
            lastSeenMillisecondsAgo: Int64((now.nanoseconds &- entry.lastSeen) / 1_000_000),
            uptimeMilliseconds: Int64((now.nanoseconds &- entry.registeredAt) / 1_000_000),
            started: isStarted(entry.registration.name), dropped: entry.dropped)
        if entry.registration.replicable {
            record.instances = entry.instances.map { instance in
                ServiceRecord.Instance(
                    instance: instance.id, pid: instance.registration.pid, host: instance.registration.host,
                    registeredAtMilliseconds: Int64(
                        wall(at: MonotonicInstant(nanoseconds: instance.joinedAt)) / 1_000_000),
                    lastSeenMillisecondsAgo: Int64((now.nanoseconds &- instance.lastSeen) / 1_000_000),
                    inFlight: instance.inFlight, connected: instance.connected, dropped: instance.dropped)
            }
        }
        return record
    }

    /// A routing id as hex, for log lines.
    /// A peer as a log line names it: its services when it registered any, with its routing id.
    /// A CURVE public key as messages name it: its name in the policy (with the key when the policy
    /// does not list it).
    func keyName(_ publicKey: String) -> String {
        policy?.names[publicKey].map { "'\($0)'" } ?? publicKey
    }

    func peerName(_ peer: [UInt8]) -> String {
        let names = registry.entries.values.filter { $0.index(of: peer) != nil }.map(\.registration.name)
            .sorted()
        return names.isEmpty
            ? "peer \(Self.describe(peer))" : "\(names.joined(separator: ", ")) (peer \(Self.describe(peer)))"
    }

    static func describe(_ peer: [UInt8]) -> String {
        peer.map { byte in
            let digits = String(byte, radix: 16)
            return digits.count == 1 ? "0" + digits : digits
        }.joined()
    }
}
