import Glibc
import LifelineProtocol
import LifelineSupport
import ZeroMQ

/// Sending what a step of the broker produced, in order: the journal records first (consecutive
/// ones with one `write`, so every event is on disk before it goes on the bus), then replies on the
/// ROUTER and events on the XPUB — consecutive events of one name as one bus message.
extension BrokerServer {
    /// Writes the journal records of the output first, in order — consecutive records with one
    /// `write` — so that every event is on disk before it goes on the bus.
    private func writeJournal() {
        // Without a journal file (none configured) there is nothing to write.
        guard journal != nil else { return }
        var pending: [UInt8] = []
        func append() {
            if !pending.isEmpty, let error = journal?.append(pending) { stopForJournal("append to", error) }
            pending.removeAll(keepingCapacity: true)
        }
        for item in output {
            switch item {
            case .record(let record): pending += record
            case .rewriteJournal(let records):
                append()
                if let error = journal?.rewrite(records) { stopForJournal("rewrite", error) }
            default: break
            }
        }
        append()
    }

    /// A record the journal could not take must be neither acknowledged nor sent: the broker stops
    /// here, before anything of this step leaves it, as a `kill -9` would (a failed rewrite leaves
    /// the file it would have replaced as it was). Started again on the same directory (by its
    /// supervisor) once the disk takes writes, it restores the journal, dropping what was cut short,
    /// and its publishers send again what it had not acknowledged.
    private func stopForJournal(_ what: String, _ error: Int32) -> Never {
        let path = journal?.path ?? "the journal"
        let reason = String(cString: strerror(error))
        let failed =
            what == "rewrite"
            ? "rewrite \(path) (through \(path).tmp: \(reason))" : "\(what) \(path) (\(reason))"
        log(
            "could not \(failed): stopping before this step's events are sent or acknowledged; a broker that went on would acknowledge events it cannot keep"
        )
        exit(1)
    }

    /// Sends everything the output holds, in order, and empties it. A group's leader hands it to
    /// replication instead: it leaves once a majority holds its state changes.
    func flush() {
        if let group {
            guard !output.isEmpty else { return }
            let items = output
            output.removeAll(keepingCapacity: true)
            release(group.add(StateOperation.of(items), output: items))
            return
        }
        writeJournal()
        sendNow(output)
        output.removeAll(keepingCapacity: true)
    }

    /// Sends the output of committed entries (their state is written already).
    func release(_ entries: [ReplicationLog<BrokerOutput>.Entry]) {
        for entry in entries { sendNow(entry.output) }
    }

    /// Sends `items` on the sockets, in order (state operations are written elsewhere).
    func sendNow(_ items: [BrokerOutput]) {
        for (index, item) in items.enumerated() {
            // A group's leader checks its lease before every reply and event it hands to ZeroMQ,
            // and beats to its standbys while a long output (a REPLAY of the journal) leaves, so
            // that they do not take it for silent.
            if let group {
                if index & 255 == 255 { group.tick(now: SystemClock.monotonicNanoseconds()) }
                if !group.certainlyLeads() {
                    busRun.clear()
                    return
                }
            }
            if case .publish(let message) = item {
                if !busRun.accepts(message) { sendBusRun() }
                busRun.add(message)
                continue
            }
            sendBusRun()
            switch item {
            case .send(let peer, let frames):
                routerMayHaveInput = true
                // A send processes libzmq's commands: the connection behind a routing id may have
                // changed since the last message.
                routerConnections.update()
                // Only to the connection the peer spoke on: another that took its routing id gets nothing.
                let connection = peer.suffix(4).reduce(UInt32(0)) { $0 << 8 | UInt32($1) }
                guard peer.count > 4, routerConnections.isOpen(connection) else {
                    log("dropped a message to \(core.peerName(peer)): its connection has closed")
                    continue
                }
                // Behind what waits for the peer already, or when its queue is full (a connection
                // the monitor does not number, inproc, has no backlog: what does not fit is dropped).
                if backlogs.holds(connection) || !sendToPeer(peer, frames) {
                    if connection != 0 {
                        holdBack(frames, for: peer, connection: connection)
                    } else {
                        log("dropped a message to \(core.peerName(peer)): its queue is full")
                    }
                }
            case .publish: break
            case .log(let line): log(line)
            case .persist(let file, let document): if group == nil { persist(file, document) }
            case .record, .rewriteJournal: break
            }
        }
        sendBusRun()
    }

    /// Sends the events gathered in the bus run as one bus message, and empties it.
    private func sendBusRun() {
        guard !busRun.isEmpty else { return }
        if let group, !group.certainlyLeads() {
            busRun.clear()
            return
        }
        if busReadDue == nil { busReadDue = SystemClock.monotonicNanoseconds() &+ 10_000_000 }
        do { try busRun.send(on: bus) } catch { log("publish failed: \(error)") }
    }
}
