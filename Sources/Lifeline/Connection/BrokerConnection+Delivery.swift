import LifelineProtocol

/// Delivery, deduplication and gaps: each live event is delivered once, in topic order; a skipped
/// topic sequence holds the bus and asks the broker's journal for what is missing.
extension BrokerConnection {
    /// Delivers a live event unless it is a duplicate; a skipped topic sequence starts a recovery.
    mutating func accept(
        _ message: BusMessage, receivedAt: UInt64 = 0, into effects: inout [ConnectionEffect]
    ) {
        guard message.header.epoch == epoch else { return }
        if pause.isOn {
            notDelivered(message)
            return
        }
        // The common case, the next event of its name, moves its cursor in place: one lookup of the
        // name where the general path below takes two.
        if takesShortcut,
            topics.advance(
                message.name, sequence: message.header.sequence, topicSequence: message.header.topicSequence)
        {
            lastSequence = max(lastSequence, message.header.sequence)
            effects.append(.deliver(.event(message, receivedAt: receivedAt, replayed: false)))
            return
        }
        let cursor = topics[message.name] ?? TopicCursor()
        if message.header.sequence <= cursor.sequence { return }
        if message.header.topicSequence <= cursor.topicSequence {
            // The broker numbers this name afresh (it lost part of its journal): go on from here.
            effects.append(
                .deliver(
                    .log(
                        "\(message.name): the broker's topic sequence went back to \(message.header.topicSequence); going on from it"
                    )))
            deliver(message, replayed: false, receivedAt: receivedAt, into: &effects)
            return
        }
        if message.header.topicSequence != cursor.topicSequence + 1 {
            let missing = message.header.topicSequence &- cursor.topicSequence &- 1
            effects.append(
                .deliver(
                    .log(
                        "\(message.name): \(missing) event(s) missing before #\(message.header.sequence); asking the broker to replay"
                    )))
            held.append(message)
            askJournal(
                after: cursor.sequence, epoch: message.header.epoch, for: [message.name], into: &effects)
            return
        }
        deliver(message, replayed: false, receivedAt: receivedAt, into: &effects)
    }

    /// The common case of ``accept(_:receivedAt:into:)`` for a bus message's events (one name): delivers
    /// those from the first on that each come next of their name as one run
    /// (``ConnectionEffect/deliverRun(_:receivedAt:)``), with one lookup of the name, and returns how
    /// many; the others go through `accept` one by one.
    mutating func acceptInOrder(
        _ messages: [BusMessage], receivedAt: UInt64, into effects: inout [ConnectionEffect]
    ) -> Int {
        guard takesShortcut, !recovering, !pause.isOn, let epoch, let first = messages.first else { return 0 }
        if case .joining = phase { return 0 }
        let moved = topics.advance(first.name, over: messages[...], epoch: epoch)
        guard moved > 0 else { return 0 }
        lastSequence = max(lastSequence, messages[moved - 1].header.sequence)
        effects.append(.deliverRun(messages[..<moved], receivedAt: receivedAt))
        return moved
    }

    /// Sends REPLAY for `names` after `sequence`; live events are held until every REPLAY out is
    /// answered.
    mutating func askJournal(
        after sequence: UInt64, epoch: UInt64, for names: [EventName], into effects: inout [ConnectionEffect]
    ) {
        recovering = true
        replaysOutstanding += 1
        let id = nextID("s")
        internalRequests[id] = .replay
        let replay = ReplayRequest(after: sequence, epoch: epoch, events: names)
        effects.append(.sendControl(ClientRequest.replay(replay).controlRequest(id: id).frames()))
    }

    /// `receivedAt`: when the bus message came (0: stamped when delivered).
    mutating func deliver(
        _ message: BusMessage, replayed: Bool, receivedAt: UInt64 = 0, into effects: inout [ConnectionEffect]
    ) {
        topics[message.name] = TopicCursor(
            sequence: message.header.sequence, topicSequence: message.header.topicSequence)
        lastSequence = max(lastSequence, message.header.sequence)
        effects.append(.deliver(.event(message, receivedAt: receivedAt, replayed: replayed)))
    }

    /// An EVENT from the journal: delivered in order unless already seen.
    mutating func replayed(_ message: BusMessage, into effects: inout [ConnectionEffect]) {
        if let current = epoch, message.header.epoch != current {
            // Joining a broker that restarted without its journal: it replays its own epoch from the
            // start, and the positions of the old one mean nothing any more.
            guard case .joining = phase else { return }
            topics.removeAll()
            lastSequence = 0
            pause.forgetPositions()
            epoch = message.header.epoch
        }
        let cursor = topics[message.name]
        if message.header.sequence <= (cursor?.sequence ?? 0) { return }
        if pause.isOn {
            notDelivered(message)
            return
        }
        if let cursor, message.header.topicSequence > cursor.topicSequence &+ 1 {
            // Not the next of its name: one sent by an earlier REPLAY after a later one was asked for
            // (the handlers were full meanwhile). Held, and the journal asked, as for a gap on the bus.
            held.append(message)
            if replaysOutstanding == 0 {
                askJournal(
                    after: cursor.sequence, epoch: message.header.epoch, for: [message.name], into: &effects)
            }
            return
        }
        deliver(message, replayed: true, into: &effects)
    }

    /// The service's handlers had no room for the event of `name` at `sequence` and take no later
    /// one: the name's position goes back to just before it, and nothing is delivered until
    /// ``handlersHaveRoom(into:)``. (A reconnect resumes from before it too.)
    mutating func handlersRefused(
        _ name: EventName, sequence: UInt64, topicSequence: UInt64, into effects: inout [ConnectionEffect]
    ) {
        if !pause.isOn {
            effects.append(
                .deliver(
                    .log(
                        "the handlers fell behind at #\(sequence): no more events until they have room, then the broker's journal sends them again"
                    )))
        }
        pause.missed(name, sequence: sequence, refused: true)
        if let cursor = topics[name], cursor.sequence >= sequence, sequence > 0, topicSequence > 0 {
            topics[name] = TopicCursor(sequence: sequence - 1, topicSequence: topicSequence - 1)
        }
        if sequence > 0 { lastSequence = min(lastSequence, sequence - 1) }
    }

    /// The handlers have room again: asks the journal for every refused name's events after the first
    /// one refused (live events are held meanwhile, as while a gap is recovered). While the
    /// connection is not registered (joining, reconnecting) it stays paused until it is.
    mutating func handlersHaveRoom(into effects: inout [ConnectionEffect]) {
        guard pause.isOn else { return }
        guard case .ready = phase else {
            pause.roomWhenReady = true
            return
        }
        guard let missed = pause.end(), let epoch else { return }
        let after = missed.after ?? missed.names.map { topics[$0]?.sequence ?? 0 }.min() ?? 0
        // Until the journal has sent them again, a reconnect resumes from before them.
        lastSequence = min(lastSequence, after)
        effects.append(
            .deliver(
                .log("the handlers have room: asking the broker's journal for the events after #\(after)")))
        askJournal(after: after, epoch: epoch, for: missed.names, into: &effects)
    }

    /// An event not delivered because the handlers are full: asked of the journal with the others.
    private mutating func notDelivered(_ message: BusMessage) {
        pause.missed(message.name, sequence: message.header.sequence)
        lastSequence = min(lastSequence, message.header.sequence &- 1)
    }

    /// Takes the topics' positions from a snapshot (where the broker stands for each of our events);
    /// not for a name whose events the handlers refused and wait to get again.
    mutating func adopt(_ snapshot: TopicPositions) {
        for (name, position) in snapshot.positions where !pause.holds(name) {
            let given = TopicCursor(sequence: position.sequence, topicSequence: position.topicSequence)
            if given.sequence > (topics[name]?.sequence ?? 0) { topics[name] = given }
        }
    }

    /// Delivers the events held while joining or recovering, in order, through the duplicate filter.
    mutating func releaseHeld(into effects: inout [ConnectionEffect]) {
        let pending = held.sorted { $0.header.sequence < $1.header.sequence }
        held.removeAll()
        for (index, message) in pending.enumerated() {
            accept(message, into: &effects)
            if recovering {
                held.append(contentsOf: pending[(index + 1)...])
                return
            }
        }
    }
}
