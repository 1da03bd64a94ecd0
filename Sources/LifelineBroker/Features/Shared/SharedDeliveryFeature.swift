import LifelineProtocol

/// `shared` events (REGISTER's `shared`): each such event goes to one instance of each name that
/// declares it, as an EVENT on the control socket with flag bits 0 and 1, and stays in flight until
/// that instance acknowledges it (ACK). The connected instance with the fewest in flight gets the
/// next (at most ``window`` each); an instance that leaves or loses its connection gives its events
/// back and another gets them. A name with no instance holds its events (up to the journal's
/// capacity) until one registers. The queues (``BrokerCore/sharedQueues``) live as long as the
/// broker; with a durable journal, each name's position in them does too (``SharedCursor``): a
/// restarted broker, or a group's new leader, owes each name the journal's events it had not
/// acknowledged.
struct SharedDeliveryFeature: BrokerFeature {
    /// Events in flight to one instance at most.
    static let window = 64

    /// Per name, how many events it sent: ties between instances go round.
    private var turns: [String: Int] = [:]

    mutating func handle(_ request: ClientRequest, from peer: [UInt8], id: [UInt8], in core: inout BrokerCore)
    {}

    /// An ACK from `peer`: true when it acknowledged a shared event in flight to it.
    mutating func acknowledged(_ ack: Acknowledgement, from peer: [UInt8], in core: inout BrokerCore) -> Bool
    {
        guard core.sharedQueues[ack.service]?.acknowledge(ack.sequence, from: peer) == true else {
            return false
        }
        core.journalRecord(.sharedHandled(name: ack.service, sequence: ack.sequence))
        if let error = ack.error {
            core.log("\(ack.service): shared event #\(ack.sequence) failed in its handler: \(error)")
        }
        pump(ack.service, in: &core)
        return true
    }

    mutating func react(to announcement: Announcement, in core: inout BrokerCore) {
        switch announcement {
        case .sharedEvent(let message, let names):
            for name in names.sorted() {
                if let dropped = core.sharedQueues[name]?.add(message) {
                    core.journalRecord(.sharedHandled(name: name, sequence: dropped.header.sequence))
                    core.log(
                        "\(name): dropped shared event #\(dropped.header.sequence) (\(dropped.name)): \(core.configuration.journalCapacity) wait for an instance already"
                    )
                }
                pump(name, in: &core)
            }
        case .registered(let registration, _):
            declare(registration, in: &core)
            pump(registration.name, in: &core)
        case .instanceJoined(let registration, _, _): pump(registration.name, in: &core)
        case .instanceLeft(let registration, let peer, _, _):
            core.sharedQueues[registration.name]?.giveBack(from: peer)
            pump(registration.name, in: &core)
        case .cutOff(let peer, let names):
            for name in names {
                core.sharedQueues[name]?.giveBack(from: peer)
                pump(name, in: &core)
            }
        case .gone(let registration, _):
            // Its last instance left: what was in flight to it waits for the next.
            core.sharedQueues[registration.name]?.giveBack(from: nil)
        default: break
        }
    }

    /// Takes back each name's position from a durable journal's `records` (the journal's events
    /// already restored): its queue holds again what it was owed, and its routes are open before
    /// any instance registers. Returns how many names and events it took back.
    mutating func restore(_ records: [JournalRecord], in core: inout BrokerCore) -> (names: Int, events: Int)
    {
        var cursors: [String: SharedCursor] = [:]
        for record in records {
            switch record {
            case .sharedCursor(let cursor): cursors[cursor.name] = cursor
            case .sharedHandled(let name, let sequence): cursors[name]?.handled.insert(sequence)
            default: break
            }
        }
        var events = 0
        for (name, cursor) in cursors {
            var queue = SharedQueue(limit: core.configuration.journalCapacity, cursor: cursor)
            for message in core.journal.events(after: cursor.after, names: Set(cursor.since.keys))
            where cursor.owes(message) {
                _ = queue.add(message)
                events += 1
            }
            core.sharedQueues[name] = queue
            for event in cursor.since.keys { core.sharedRoutes[event, default: []].insert(name) }
        }
        return (cursors.count, events)
    }

    /// Routes `registration`'s shared events to its name from now on; a change of them is written
    /// down in the durable journal.
    private mutating func declare(_ registration: ServiceRegistration, in core: inout BrokerCore) {
        let name = registration.name
        let declared = Set(registration.shared)
        let previous = core.sharedQueues[name]?.since ?? [:]
        guard Set(previous.keys) != declared else { return }
        for event in previous.keys where !declared.contains(event) {
            core.sharedRoutes[event]?.remove(name)
            if core.sharedRoutes[event]?.isEmpty == true { core.sharedRoutes[event] = nil }
        }
        for event in declared { core.sharedRoutes[event, default: []].insert(name) }
        let since = Dictionary(uniqueKeysWithValues: declared.map { ($0, previous[$0] ?? core.sequence) })
        if core.sharedQueues[name] == nil {
            let start = SharedCursor(name: name, after: core.sequence, since: since, handled: [])
            core.sharedQueues[name] = SharedQueue(limit: core.configuration.journalCapacity, cursor: start)
        }
        core.sharedQueues[name]?.since = since
        if let queue = core.sharedQueues[name] { core.journalRecord(.sharedCursor(queue.cursor(name: name))) }
    }

    /// Sends what waits for `name` to its connected instances, fewest in flight first.
    private mutating func pump(_ name: String, in core: inout BrokerCore) {
        guard var queue = core.sharedQueues[name], queue.waitingCount > 0,
            let entry = core.registry.entry(named: name)
        else { return }
        defer { core.sharedQueues[name] = queue }
        var loads = entry.instances.filter(\.connected).map { ($0.peer, queue.inFlight(to: $0.peer)) }
        while queue.waitingCount > 0 {
            guard let least = loads.map(\.1).min(), least < Self.window else { return }
            let tied = loads.indices.filter { loads[$0].1 == least }
            let turn = turns[name, default: 0]
            turns[name] = turn &+ 1
            let chosen = tied[turn % tied.count]
            guard let message = queue.take() else { return }
            var shared = message
            shared.header.flags |= 3
            core.send(loads[chosen].0, .event(shared))
            queue.sent(message, to: loads[chosen].0)
            loads[chosen].1 += 1
        }
    }

    /// A name's figures, for STATS: events waiting, in flight, sent, sent again, dropped.
    func figures(of name: String, in core: BrokerCore) -> StatsReport.Shared? {
        guard let queue = core.sharedQueues[name] else { return nil }
        var figures = StatsReport.Shared()
        (figures.waiting, figures.inFlight) = (Int64(queue.waitingCount), Int64(queue.inFlight.count))
        (figures.sent, figures.redelivered) = (Int64(queue.sent), Int64(queue.redelivered))
        figures.dropped = Int64(queue.dropped)
        return figures
    }
}
