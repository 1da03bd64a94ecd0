import LifelineProtocol

/// `shared` events (REGISTER's `shared`): each such event goes to one instance of each name that
/// declares it, as an EVENT on the control socket with flag bits 0 and 1, and stays in flight until
/// that instance acknowledges it (ACK). The connected instance with the fewest in flight gets the
/// next (at most ``window`` each); an instance that leaves or loses its connection gives its events
/// back and another gets them. A name with no instance holds its events (up to the journal's
/// capacity) until one registers. The queues live as long as the broker.
struct SharedDeliveryFeature: BrokerFeature {
    /// Events in flight to one instance at most.
    static let window = 64

    private var queues: [String: SharedQueue] = [:]
    /// What each name declared shared, as it last registered.
    private var declared: [String: [EventName]] = [:]
    /// Per name, how many events it sent: ties between instances go round.
    private var turns: [String: Int] = [:]

    mutating func handle(_ request: ClientRequest, from peer: [UInt8], id: [UInt8], in core: inout BrokerCore)
    {}

    /// An ACK from `peer`: true when it acknowledged a shared event in flight to it.
    mutating func acknowledged(_ ack: Acknowledgement, from peer: [UInt8], in core: inout BrokerCore) -> Bool
    {
        guard queues[ack.service]?.acknowledge(ack.sequence, from: peer) == true else { return false }
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
                if let dropped = queues[name]?.add(message) {
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
            queues[registration.name]?.giveBack(from: peer)
            pump(registration.name, in: &core)
        case .cutOff(let peer, let names):
            for name in names {
                queues[name]?.giveBack(from: peer)
                pump(name, in: &core)
            }
        case .gone(let registration, _):
            // Its last instance left: what was in flight to it waits for the next.
            queues[registration.name]?.giveBack(from: nil)
        default: break
        }
    }

    /// Routes `registration`'s shared events to its name from now on.
    private mutating func declare(_ registration: ServiceRegistration, in core: inout BrokerCore) {
        let name = registration.name
        for event in declared[name] ?? [] where !registration.shared.contains(event) {
            core.sharedRoutes[event]?.remove(name)
            if core.sharedRoutes[event]?.isEmpty == true { core.sharedRoutes[event] = nil }
        }
        declared[name] = registration.shared
        guard !registration.shared.isEmpty else { return }
        for event in registration.shared { core.sharedRoutes[event, default: []].insert(name) }
        if queues[name] == nil { queues[name] = SharedQueue(limit: core.configuration.journalCapacity) }
    }

    /// Sends what waits for `name` to its connected instances, fewest in flight first.
    private mutating func pump(_ name: String, in core: inout BrokerCore) {
        guard var queue = queues[name], queue.waitingCount > 0, let entry = core.registry.entry(named: name)
        else { return }
        defer { queues[name] = queue }
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

    /// Each name's figures, for STATS: events waiting, in flight, sent, sent again, dropped.
    var report: [String: JSONValue] {
        queues.mapValues { queue in
            [
                "waiting": .int(Int64(queue.waitingCount)), "inFlight": .int(Int64(queue.inFlight.count)),
                "sent": .int(Int64(queue.sent)), "redelivered": .int(Int64(queue.redelivered)),
                "dropped": .int(Int64(queue.dropped)),
            ]
        }
    }
}
