import LifelineProtocol
import LifelineSupport
import ZeroMQ

/// A leading member's replication, run by ``BrokerServer`` on its thread: each step's state
/// operations become an entry sent to every standby, and the step's output waits in the
/// ``ReplicationLog`` until a majority holds the entry. Also the leader's side of the group socket
/// (JOIN, ACK, others' ASK) and its fencing: it leads only while its etcd lease is surely alive.
package final class GroupLeader {
    let member: GroupMember
    package let term: UInt64
    private(set) var log: ReplicationLog<BrokerOutput>
    private var nextBeat: UInt64 = 0
    /// Why this member must stop leading, once it must.
    private(set) var deposed: String?

    package init(member: GroupMember, term: UInt64, position: ReplicaPosition) {
        self.member = member
        self.term = term
        log = ReplicationLog(term: term, groupSize: member.configuration.members.count, after: position)
    }

    /// The group socket's descriptor, to wait on.
    var fileDescriptor: Int32? { (try? member.groupSocket.get(.fileDescriptor)).map(Int32.init) }
    /// Whether a message waits on the group socket. Its `ZMQ_FD` may not say so: a send on the
    /// socket (an entry to the standbys) can take in the signal of an acknowledgement that arrived.
    var hasInput: Bool {
        ((try? member.groupSocket.get(.events)) ?? 0) & Int(PollEvents.readable.rawValue) != 0
    }
    /// The leadership notices' descriptor, to wait on.
    var noticeDescriptor: Int32 { member.leadership.notices.fileDescriptor }

    /// When the loop must look again (the next beat, the lease's end).
    var nextDeadline: UInt64 { min(nextBeat, member.leadership.validUntil) }

    /// How long a new leader answers a LOOKUP or CALL of an unknown service with 503: twice the
    /// heartbeat window, at least 5 s, for services to notice the old leader gone and register again.
    static func rejoinWindow(_ configuration: BrokerConfiguration) -> Duration {
        max(.nanoseconds(Int64(configuration.heartbeat.expiryNanoseconds) * 2), .seconds(5))
    }

    /// Where the group stands, as STATS `group` reports it: this member leads under ``term``; each
    /// member's role and how far it holds the log (a standby's acknowledged index, its lag behind
    /// the last entry, when it was last heard); and the etcd lease this leader's fencing rests on.
    func status(now: UInt64) -> StatsReport.Group {
        let configuration = member.configuration
        // A standby that joined again may still be listed under its earlier connection: the one heard last.
        let followers = Dictionary(log.followers.values.map { ($0.member, $0) }) {
            $0.heard >= $1.heard ? $0 : $1
        }
        var status = StatsReport.Group()
        status.members = configuration.members.map { name in
            var entry = StatsReport.Group.Member()
            entry.member = name
            if name == configuration.member {
                (entry.role, entry.index, entry.lag) = ("leader", Int(log.lastIndex), 0)
            } else if let follower = followers[name] {
                entry.role = "standby"
                entry.index = Int(follower.match)
                entry.lag = Int(log.lastIndex &- min(follower.match, log.lastIndex))
                entry.heardMillisecondsAgo = Int((now &- min(follower.heard, now)) / 1_000_000)
            } else {
                entry.role = "unreached"
            }
            return entry
        }
        let validUntil = member.leadership.validUntil
        (status.name, status.member, status.term) = (configuration.name, configuration.member, term)
        (status.commit, status.last) = (Int64(log.commitIndex), Int64(log.lastIndex))
        status.etcd.endpoints = configuration.etcd
        status.etcd.leaseValidMilliseconds = Int64(validUntil > now ? (validUntil - now) / 1_000_000 : 0)
        status.etcd.healthy = validUntil > now
        return status
    }

    /// The first entry of the term: nothing leaves before a majority holds it.
    func beginTerm() -> [ReplicationLog<BrokerOutput>.Entry] {
        add([.beginTerm(term)], output: [])
    }

    /// Takes a step's output: returns what may leave now (committed entries, in order).
    func add(_ operations: [StateOperation], output: [BrokerOutput]) -> [ReplicationLog<BrokerOutput>.Entry] {
        let (entry, release) = log.add(operations, output: output)
        if let entry {
            let message = Self.append(entry, term: term, commit: log.commitIndex)
            for peer in log.followers.keys { send(peer, message) }
        }
        return commit(release)
    }

    /// Handles the group socket and the leadership notices; returns newly committed entries.
    func drain(now: UInt64) -> [ReplicationLog<BrokerOutput>.Entry] {
        takeNotices()
        var released: [ReplicationLog<BrokerOutput>.Entry] = []
        while let received = member.receivePeer() {
            let (peer, message) = (received.peer, received.message)
            switch message.command {
            case .join:
                guard message.text("group") == member.configuration.name,
                    member.configuration.members.contains(received.sender)
                else {
                    send(
                        peer,
                        GroupMember.refusal(
                            .notMember,
                            "'\(received.sender)' of group '\(message.text("group"))' is not a member of group \(member.configuration.name) (members \(member.configuration.members.joined(separator: ",")))",
                            term: term))
                    continue
                }
                // A standby joins under the term etcd showed it: an older one follows a leader that
                // is gone (it reads etcd again), a later one is a claim etcd decides.
                let joinTerm = message.number("term")
                if joinTerm > term {
                    laterTerm(joinTerm, from: received.sender)
                    continue
                }
                if joinTerm < term {
                    send(peer, Self.staleTerm(joinTerm, leading: term))
                    continue
                }
                log.join(peer: peer, member: received.sender, now: now)
                send(peer, GroupMember.snapshot(member.replica, term: term, commit: log.commitIndex))
                for entry in log.pending {
                    send(peer, Self.append(entry, term: term, commit: log.commitIndex))
                }
            case .ack:
                if message.number("term") > term {
                    laterTerm(message.number("term"), from: received.sender)
                    continue
                }
                // What a standby holds under an older term is not known to be this term's entries.
                if message.number("term") < term {
                    send(peer, Self.staleTerm(message.number("term"), leading: term))
                    continue
                }
                guard let entries = log.acknowledge(peer: peer, index: message.number("index"), now: now)
                else {
                    send(
                        peer,
                        GroupMember.refusal(
                            .notFollowing, "not following (dropped, or never joined): join again", term: term)
                    )
                    continue
                }
                released += commit(entries)
            case .refuse:
                if message.number("term") > term { laterTerm(message.number("term"), from: received.sender) }
            default:
                member.answer(received, as: .leader(term))
                if member.replica.term > term { deposed = "another member began term \(member.replica.term)" }
            }
        }
        return released
    }

    /// The refusal of a JOIN or ACK under a term older than this leader's.
    private static func staleTerm(_ stale: UInt64, leading term: UInt64) -> GroupMessage {
        GroupMember.refusal(.staleTerm, "term \(stale) is older than this leader's \(term)", term: term)
    }

    /// A member says it holds a later term. Nobody's word deposes a leader: etcd does (its lease
    /// and key, checked every 100 ms), so a member that says 2^62 changes nothing; what it says
    /// is dropped and logged.
    private func laterTerm(_ later: UInt64, from sender: String) {
        member.drop(
            "a claim of a later term \(later) by '\(sender.escapedForLog)' (etcd decides who leads)",
            kind: "later term \(sender)")
    }

    /// Whether this member may still hand a reply or an event to ZeroMQ: its lease is certainly
    /// held now. Checked immediately before every output leaves, so a leader paused past its
    /// lease sends nothing once it resumes; the first refusal deposes it.
    func certainlyLeads() -> Bool {
        if deposed != nil { return false }
        if SystemClock.monotonicNanoseconds() < member.leadership.validUntil { return true }
        fenced()
        return false
    }

    /// Reads why the leadership was lost, if it says.
    private func takeNotices() {
        for notice in member.leadership.notices.drain() {
            if case .lost(let why) = notice, deposed == nil { deposed = why }
        }
    }

    /// The lease's deadline has passed: the leadership's own word on why, or the lease.
    private func fenced() {
        takeNotices()
        if deposed == nil { deposed = "its etcd lease could not be renewed in time" }
    }

    /// Beats to the standbys when due, drops silent or lagging ones; sets ``deposed`` once the lease
    /// may have expired.
    func tick(now: UInt64) {
        if now >= member.leadership.validUntil && deposed == nil { fenced() }
        guard now >= nextBeat else { return }
        nextBeat = now &+ UInt64(member.configuration.beatInterval.wholeNanoseconds)
        for dropped in log.dropStale(heardBefore: now &- 3_000_000_000) {
            member.logLine("standby \(dropped) fell silent or too far behind; it must join again (snapshot)")
        }
        let beat = GroupMessage(.beat, ["term": .int(Int64(term)), "commit": .int(Int64(log.commitIndex))])
        for peer in log.followers.keys { send(peer, beat) }
    }

    /// Writes committed entries to this member's own copy.
    private func commit(_ entries: [ReplicationLog<BrokerOutput>.Entry]) -> [ReplicationLog<BrokerOutput>
        .Entry]
    {
        for entry in entries where !entry.operations.isEmpty {
            do {
                try member.replica.apply(
                    entry.operations, at: ReplicaPosition(term: term, index: entry.index))
            } catch {
                member.logLine("\(error)")
            }
        }
        return entries
    }

    private func send(_ peer: [UInt8], _ message: GroupMessage) {
        _ = try? member.groupSocket.send(frames: [peer] + message.frames, dontWait: true)
    }

    private static func append(_ entry: ReplicationLog<BrokerOutput>.Entry, term: UInt64, commit: UInt64)
        -> GroupMessage
    {
        GroupMessage(
            .append,
            ["term": .int(Int64(term)), "index": .int(Int64(entry.index)), "commit": .int(Int64(commit))],
            blobs: entry.operations.flatMap(\.frames))
    }
}
