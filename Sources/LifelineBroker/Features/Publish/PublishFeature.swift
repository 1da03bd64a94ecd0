import LifelineProtocol

/// PUBLISH (checks, lifecycle state, sequencing, journal, acknowledged delivery), ACK and REPLAY.
struct PublishFeature: BrokerFeature {
    private var acknowledgements = PendingAcknowledgements()
    private var recent: RecentPublications

    init(configuration: BrokerConfiguration) {
        recent = RecentPublications(capacity: configuration.rememberedPublications)
    }

    /// Remembers the ids of the publications a durable journal brought back, so that a repeat
    /// after the restart is still answered once (with the sequence it got, its subscriber count at
    /// the time and no acknowledgements).
    mutating func restore(_ records: [JournalRecord]) {
        for (index, record) in records.enumerated() {
            guard case .event(let message, let publishID?, let subscribers, let batch) = record else {
                continue
            }
            var receipt = PublishReceipt(
                event: message.name, sequence: message.header.sequence, epoch: message.header.epoch,
                subscribers: subscribers, lifecycle: nil)
            receipt.count = batch
            if batch > 1 {
                receipt.subscribersByEvent = Self.subscribersByEvent(ending: index, of: batch, in: records)
            }
            recent.record(publishID, .answered(receipt.body))
        }
    }

    /// The per-name subscriber counts of a restored batch of several names, read from its `count`
    /// events ending at `records[last]` with consecutive sequences; nil for one name, or when the
    /// journal no longer holds the whole batch.
    private static func subscribersByEvent(ending last: Int, of count: Int, in records: [JournalRecord])
        -> [String: Int]?
    {
        var counts: [String: Int] = [:]
        var found = 0
        var expected: UInt64?
        for record in records[...last].reversed() {
            guard case .event(let message, _, let subscribers, _) = record else { continue }
            if let expected, message.header.sequence != expected { return nil }
            counts[message.name.rawValue] = subscribers
            found += 1
            if found == count { break }
            expected = message.header.sequence &- 1
        }
        return found == count && counts.count > 1 ? counts : nil
    }

    mutating func handle(_ request: ClientRequest, from peer: [UInt8], id: [UInt8], in core: inout BrokerCore)
    {
        switch request {
        case .publish(let publish): self.publish(publish, from: peer, id: id, in: &core)
        case .acknowledge(let ack):
            if let epoch = ack.epoch, epoch != core.epoch { return }
            core.stats.acknowledgements &+= 1
            if let done = acknowledgements.acknowledge(
                sequence: ack.sequence, service: ack.service, peer: peer, error: ack.error)
            {
                complete(done, in: &core)
            }
        case .replay(let replay):
            let plan = Replay.plan(after: replay.after, epoch: replay.epoch, in: core)
            var result = ReplayResult(
                epoch: core.epoch, sequence: core.sequence, topics: core.topicPositions(for: replay.events),
                replayed: nil, gap: plan.gap)
            if let after = plan.replayAfter {
                result.replayed = Replay.send(after: after, names: Set(replay.events), to: peer, in: &core)
            }
            core.reply(peer, id, result)
        default: break
        }
    }

    /// A PUBLISH of one event or a batch, on one path: every event is checked first, then all are
    /// published in order (consecutive sequences) and answered once; one bad event refuses them all.
    /// Only a single event may wait for acknowledgements.
    private mutating func publish(
        _ request: PublishRequest, from peer: [UInt8], id: [UInt8], in core: inout BrokerCore
    ) {
        let given = request.publishID
        var request = request
        // Under CURVE each key's ids are its own: another key's repeat is another publication.
        if let given, let key = core.peerKeys[peer] { request.publishID = "\(key)/\(given)" }
        if let publishID = request.publishID, let outcome = recent.outcome(of: publishID) {
            core.log(
                "PUBLISH '\(given ?? publishID)' repeated by \(core.peerName(peer)): answered with the first receipt, not published again"
            )
            switch outcome {
            case .answered(let body):
                if request.reply { core.send(peer, ControlReply(requestID: id, status: .ok, body: body)) }
            case .waiting(let sequence): acknowledgements.addRepeat(of: sequence, client: peer, requestID: id)
            }
            return
        }
        if let (status, problem) = PublishChecks.problem(of: request, in: core) {
            if request.reply {
                core.fail(peer, id, status, problem)
            } else {
                core.log("refused a PUBLISH without reply from \(core.peerName(peer)): \(problem)")
            }
            return
        }
        let count = request.count
        let acknowledged =
            request.acknowledged
            ?? (count == 1 && EventCatalog.descriptor(for: request.event)?.requiresAcknowledgement == true)
        var last = BusHeader(
            epoch: core.epoch, sequence: 0, topicSequence: 0, publishedWallNanoseconds: 0,
            publishedMonotonicNanoseconds: 0)
        var previous: EventName?
        var (plain, subscribers) = (true, 0)
        func published(_ payload: [UInt8]) -> [UInt8] { payload.isEmpty ? Array("{}".utf8) : payload }
        var index = 0
        while index < count {
            let event = request.event(at: index)
            if event.name != previous {
                previous = event.name
                plain = LifecycleState.target(of: event.name) == nil
                subscribers = core.registry.subscriberCount(of: event.name)
            }
            // Consecutive plain events of the same name go as one run; one that moves the lifecycle
            // goes alone, between its transition and its announcement.
            var payloads = [published(event.payload)]
            var end = index + 1
            while plain && end < count {
                let next = request.event(at: end)
                guard next.name.isIdentical(to: event.name) else { break }
                payloads.append(published(next.payload))
                end += 1
            }
            if !plain {
                _ = EventChecks.moveLifecycle(event.name, force: request.force, peer: peer, id: id, in: &core)
            }
            let isLast = end == count
            last = core.publish(
                event.name, payloads: payloads, flags: acknowledged ? 1 : 0,
                publishID: isLast ? request.publishID : nil, subscribers: subscribers,
                batch: isLast ? count : 1)
            if !plain {
                EventChecks.announceLaunch(
                    event.name, payload: event.payload, by: "a published \(event.name)", in: &core)
            }
            index = end
        }
        guard request.reply || request.publishID != nil || acknowledged else { return }
        var receipt = PublishReceipt(
            event: request.event(at: count - 1).name, sequence: last.sequence, epoch: last.epoch,
            subscribers: PublishChecks.subscribers(of: request, in: core), lifecycle: core.lifecycle)
        if count > 1 {
            receipt.count = count
            receipt.subscribersByEvent = PublishChecks.subscribersByEvent(of: request, in: core)
        }
        if acknowledged {
            awaitAcknowledgements(
                of: request, sequence: last.sequence, receipt: receipt, from: peer, id: id, in: &core)
            return
        }
        let body = receipt.body
        if let publishID = request.publishID { recent.record(publishID, .answered(body)) }
        if request.reply { core.send(peer, ControlReply(requestID: id, status: .ok, body: body)) }
    }

    /// Holds the receipt of an acknowledged event until each subscribing service (each connected
    /// instance of it; any one of a shared subscription) acknowledged it, or its time ran out.
    private mutating func awaitAcknowledgements(
        of request: PublishRequest, sequence: UInt64, receipt: PublishReceipt, from peer: [UInt8],
        id: [UInt8], in core: inout BrokerCore
    ) {
        let name = request.event
        var receipt = receipt
        let timeout =
            request.timeoutMilliseconds ?? core.configuration.acknowledgementTimeout.wholeMilliseconds
        let handlers = core.registry.handlers(of: name)
        receipt.subscribers = handlers.count
        receipt.acknowledged = []
        // An instance whose connection closed will not acknowledge: a name with none connected
        // is missing at once.
        let each = handlers.filter { !$0.registration.shared.contains(name) }
        let cutOff = each.filter { !$0.instances.contains(where: \.connected) }.map(\.registration.name)
        receipt.missing = cutOff.sorted().map { .init(service: $0, reason: Self.lostConnection) }
        var entry = PendingAcknowledgements.Waiting(
            client: peer, requestID: id, wait: [], timeoutMilliseconds: timeout,
            expected: Dictionary(
                uniqueKeysWithValues: each.filter { !cutOff.contains($0.registration.name) }.map {
                    ($0.registration.name, Set($0.instances.filter(\.connected).map(\.peer)))
                }),
            anyOf: Set(
                handlers.filter { $0.registration.shared.contains(name) }.map(\.registration.name)),
            receipt: receipt, publishID: request.publishID)
        let waits = !entry.expected.isEmpty || !entry.anyOf.isEmpty
        if waits {
            entry.wait = core.correlator.open(
                .publish, key: sequence, peer: nil, deadline: core.deadline(timeout))
        }
        if let publishID = request.publishID {
            recent.record(publishID, .waiting(sequence: sequence))
        }
        if !waits {
            complete(entry, in: &core)
        } else {
            acknowledgements.add(entry)
        }
    }

    private mutating func complete(_ entry: PendingAcknowledgements.Waiting, in core: inout BrokerCore) {
        core.correlator.close(entry.wait)
        let receipt = entry.receipt
        if !receipt.missing.isEmpty {
            let who = receipt.missing.map { "\($0.service) (\($0.reason))" }.joined(separator: ", ")
            core.log("\(receipt.event) #\(receipt.sequence): not acknowledged by \(who)")
        }
        let body = receipt.body
        if let publishID = entry.publishID { recent.record(publishID, .answered(body)) }
        for (client, requestID) in [(entry.client, entry.requestID)] + entry.repeats {
            core.send(client, ControlReply(requestID: requestID, status: .ok, body: body))
        }
    }

    mutating func expired(_ wait: Correlator.Entry, in core: inout BrokerCore) {
        if let entry = acknowledgements.expire(sequence: wait.key) { complete(entry, in: &core) }
    }

    static let lostConnection = "service lost its connection before acknowledging"

    mutating func react(to announcement: Announcement, in core: inout BrokerCore) {
        let done: [PendingAcknowledgements.Waiting]
        switch announcement {
        case .gone(let registration, let reason):
            done = acknowledgements.serviceGone(
                registration.name, reason: "service \(reason.rawValue) before acknowledging")
        case .instanceLeft(let registration, let peer, let reason, _):
            done = acknowledgements.instanceGone(
                registration.name, peer: peer, reason: "service \(reason.rawValue) before acknowledging")
        case .cutOff(let peer, let names):
            done = names.flatMap {
                acknowledgements.instanceGone($0, peer: peer, reason: Self.lostConnection)
            }
        default: return
        }
        for entry in done { complete(entry, in: &core) }
    }
}
