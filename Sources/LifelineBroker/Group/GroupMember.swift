import Foundation
import Glibc
import LifelineProtocol
import LifelineSupport
import Synchronization
import ZeroMQ

/// A broker of a group, between leaderships (docs/PROTOCOL.md §13). On the thread that calls
/// ``standBy()`` it owns the group socket (a ROUTER on the replicate endpoint, for the member's whole
/// life), a DEALER to the leader, and, standing in for the broker's sockets on the control and bus
/// endpoints, a ROUTER that answers every client with where the leader is and an idle XPUB.
///
/// As a standby it joins the leader, installs its snapshot, applies each entry and acknowledges it,
/// and revokes the leader's lease when it falls silent. When ``Leadership`` wins the key it asks the
/// other members their positions (which makes them refuse the old term), takes the furthest copy of
/// a majority, and returns so that the caller starts a ``BrokerServer`` on the state directory.
package final class GroupMember {
    /// What this member is doing, for the answers it gives on the group socket.
    package enum Role: Equatable {
        case standby
        /// It won the key under this term and is gathering positions.
        case candidate(UInt64)
        /// It leads under this term.
        case leader(UInt64)
    }

    /// A message read off the group socket, with the member its key says sent it.
    struct PeerMessage {
        var peer: [UInt8]
        var message: GroupMessage
        /// The member whose CURVE key sent it; without keys (`--insecure`), the member it names.
        var sender: String
    }

    package enum Outcome {
        /// Lead under `term`, from `position` (the state directory holds it).
        case lead(term: UInt64, position: ReplicaPosition)
        case stop
    }

    package let configuration: GroupConfiguration
    package let replica: ReplicaDirectory
    package let leadership: Leadership
    let context: ZMQContext
    /// The group socket (ROUTER), bound for the member's life.
    let groupSocket: ZMQSocket
    /// The resolved endpoints (wildcard ports chosen once, reused by every leadership).
    package let controlEndpoints: [String]
    package let busEndpoints: [String]
    package let replicateEndpoint: String
    let log: @Sendable (String) -> Void
    /// Admits the members' keys only on the group socket, and with `--key` the policy's keys only on
    /// the stand-in sockets (nil with `--insecure` and no `--key`).
    let zap: ZAPHandler?
    /// What the stand-in sockets need to be what the leader's are: CURVE servers with the broker's
    /// keys (under `--key`), with the broker's message size limit.
    private let standInSecurity: StandIn.Security
    /// The policy file whose keys the stand-ins admit, read again by ``reloadPolicy()``.
    let policyPath: String?
    /// For checking a later term against etcd before taking it.
    let etcd: EtcdClient
    /// Messages dropped, by reason and sender, each logged at 1, 10, 100, … of its own.
    private var dropped: [String: Int] = [:]
    /// When etcd last failed to vouch for a claimed term: another claim within 20 ms is dropped
    /// without asking (a flood of claims cannot keep this thread waiting on etcd).
    var lastUnprovedClaim: UInt64 = 0
    private let mailbox = Mailbox<Bool>()
    private let stopping = StopFlag()
    /// The leader this member follows, as etcd last said.
    private var leader: MemberRecord?
    private var stand: StandIn?
    /// The state directory's lock, held for the member's life (its replica and, when it leads, its
    /// broker use the directory).
    private let stateLock: FileLock

    /// Binds the group socket and the stand-in sockets, checks the state directory and etcd.
    /// - Throws: ``GroupSetupError`` saying what is wrong (exit 1).
    package init(
        configuration: GroupConfiguration, broker: BrokerConfiguration,
        log: @escaping @Sendable (String) -> Void
    ) throws(GroupSetupError) {
        guard let directory = broker.stateDirectory else {
            throw GroupSetupError(
                "a group member needs --state-dir: its copy of the group's state lives there")
        }
        guard configuration.members.contains(configuration.member) else {
            throw GroupSetupError(
                "--member \(configuration.member) is not in --members \(configuration.members.joined(separator: ","))"
            )
        }
        self.configuration = configuration
        self.log = log
        // Locked before anything in it is read or written.
        do {
            try Directories.create(directory, what: "the state directory")
            stateLock = try StateDirectoryLock.take(directory)
        } catch {
            throw GroupSetupError("\(error)")
        }
        replica = try ReplicaDirectory(
            path: directory, group: configuration.name, member: configuration.member)
        etcd = EtcdClient(endpoints: configuration.etcd)
        policyPath = broker.curveKeys == nil ? nil : broker.policyPath
        standInSecurity = StandIn.Security(
            keys: broker.curveKeys, maximumMessageBytes: 4 * broker.maximumMessageBytes)
        var admissions: [String: ZAPHandler.Admission] = [:]
        if let keys = configuration.keys { admissions[ZAPHandler.groupDomain] = .keys(keys.allowList) }
        if broker.curveKeys != nil {
            guard CurveKeyPair.isAvailable else {
                throw GroupSetupError("this libzmq was built without CURVE (zmq_has(\"curve\") is false)")
            }
            admissions[ZAPHandler.brokerDomain] = .init(try Self.policyKeys(at: policyPath))
        }
        do {
            let context = try ZMQContext()
            self.context = context
            zap =
                admissions.isEmpty ? nil : try ZAPHandler(context: context, admissions: admissions, log: log)
            groupSocket = try ZMQSocket(context, type: .router)
            try groupSocket.set(.routerMandatory, 1)
            try groupSocket.set(.linger, 0)
            if let keys = configuration.keys {
                try groupSocket.secureAsServer(keys.pair, domain: ZAPHandler.groupDomain)
            }
            try groupSocket.bind(configuration.replicateEndpoint)
            replicateEndpoint = configuration.advertised(try groupSocket.lastEndpoint())
            let stand = try StandIn(
                context: context, control: broker.controlEndpoints, bus: broker.busEndpoints,
                security: standInSecurity)
            controlEndpoints = stand.controlEndpoints
            busEndpoints = stand.busEndpoints
            self.stand = stand
        } catch {
            throw GroupSetupError("cannot bind the group's sockets: \(error)")
        }
        let record = MemberRecord(
            member: configuration.member, control: controlEndpoints.map(configuration.advertised),
            bus: busEndpoints.map(configuration.advertised), replicate: replicateEndpoint)
        leadership = try Leadership(configuration: configuration, record: record, log: log)
    }

    /// A function any thread may call to stop the member, whatever its role.
    package var stopper: @Sendable () -> Void {
        let mailbox = self.mailbox
        let stopping = self.stopping
        return {
            stopping.raise()
            mailbox.post(true)
        }
    }

    package var isStopping: Bool { stopping.isRaised }

    /// Follows the leader until this member is to lead (or stop). The stand-in sockets are bound
    /// while it runs and closed before it returns `.lead`.
    package func standBy(print: (String) -> Void) -> Outcome {
        if stand == nil {
            do {
                stand = try StandIn(
                    context: context, control: controlEndpoints, bus: busEndpoints, security: standInSecurity)
            } catch {
                log("cannot bind the stand-in sockets: \(error); stopping")
                return .stop
            }
        }
        leadership.campaign(true)
        var follower = Follower(member: configuration.member, log: log)
        follower.connect = { [unowned self] in self.dealer(to: $0.member, at: $0.replicate) }
        defer { follower.close() }
        var printedFor: UInt64 = 0
        var suspected: Int64 = 0
        let watchdog = SystemdNotifier.watchdogMilliseconds.map { UInt64($0) * 1_000_000 }
        var nextWatchdog: UInt64 = 0
        var lastLook = SystemClock.monotonicNanoseconds()
        while !isStopping {
            if let watchdog, SystemClock.monotonicNanoseconds() >= nextWatchdog {
                SystemdNotifier.notify("WATCHDOG=1")
                nextWatchdog = SystemClock.monotonicNanoseconds() + watchdog
            }
            for notice in leadership.notices.drain() {
                switch notice {
                case .leader(let record):
                    leader = record
                    if let record, record.member != configuration.member, record.term >= replica.term {
                        follower.follow(record, replica: replica, group: configuration.name)
                    } else if record == nil {
                        follower.close()
                    }
                case .won(let term, let members):
                    follower.close()
                    leader = nil
                    if let position = elect(term: term, members: members) {
                        stand = nil
                        return .lead(term: term, position: position)
                    }
                    leadership.resign(term: term)
                    leadership.campaign(true)
                case .lost: break
                }
            }
            follower.drain(replica: replica)
            if follower.synced, let leader, printedFor != leader.term {
                printedFor = leader.term
                print(
                    "STANDBY member=\(configuration.member) leader=\(leader.member) term=\(leader.term) control=\(controlEndpoints.joined(separator: ","))"
                )
                SystemdNotifier.notify(
                    "READY=1\nSTATUS=standing by in group \(configuration.name): leader \(leader.member), term \(leader.term)"
                )
            }
            // The leader's silence is looked at once a turn, every 10 ms: a gap of half the failover
            // window since the last look (wherever in the turn it fell) is time this member did not
            // run (not a slow turn: a member starved turn after turn still suspects a dead leader).
            let look = SystemClock.monotonicNanoseconds()
            if look &- lastLook > UInt64(configuration.failoverAfter.wholeNanoseconds) / 2,
                follower.excuseAbsence(now: look)
            {
                log(
                    "this member did not run for \((look &- lastLook) / 1_000_000) ms (stopped or starved): that time is not counted as the leader's silence"
                )
            }
            lastLook = look
            if let leader, follower.overdue(failoverAfter: configuration.failoverAfter),
                suspected != leader.lease
            {
                suspected = leader.lease
                leadership.suspect(lease: leader.lease)
            }
            answerPeers()
            // Clients are sent to the leader only while it is heard from (not to one that is gone).
            let live = follower.alive(within: configuration.failoverAfter) ? leader : nil
            stand?.answer(leader: live, member: configuration.member, group: configuration.name, log: log)
            awaitInput(on: [groupSocket] + (follower.link.map { [$0] } ?? []) + (stand?.sockets ?? []))
            _ = mailbox.drain()
        }
        return .stop
    }

    /// Waits until one of `sockets`, the mailbox or the leadership notices has something, or 10 ms
    /// (the timers: joining again, the leader's silence, the watchdog). A socket's `ZMQ_FD` only says
    /// that its state may have changed, and a send can take in an arrival's signal: each socket's
    /// `ZMQ_EVENTS` is read first, and nothing waits while one has input.
    private func awaitInput(on sockets: [ZMQSocket]) {
        if mailbox.hasMessages || leadership.notices.hasMessages { return }
        var descriptors = [
            pollfd(fd: mailbox.fileDescriptor, events: Int16(POLLIN), revents: 0),
            pollfd(fd: leadership.notices.fileDescriptor, events: Int16(POLLIN), revents: 0),
        ]
        for socket in sockets {
            guard let events = try? socket.get(.events), let descriptor = try? socket.get(.fileDescriptor)
            else { continue }
            if events & Int(PollEvents.readable.rawValue) != 0 { return }
            descriptors.append(pollfd(fd: Int32(descriptor), events: Int16(POLLIN), revents: 0))
        }
        _ = poll(&descriptors, nfds_t(descriptors.count), 10)
    }

    /// Answers what other members ask of this one on the group socket: positions (taking the
    /// asker's later term once etcd shows it) and copies. A leader's messages come on the
    /// follower's DEALER, not here.
    package func answerPeers(as role: Role = .standby) {
        while let received = receivePeer() { answer(received, as: role) }
    }

    /// The next message on the group socket from a member; messages that are not LLG01, or whose
    /// named member is not the one whose key sent them, are dropped and logged.
    func receivePeer() -> PeerMessage? {
        var sender = ZMQSocket.Sender()
        while let frames = try? groupSocket.receiveFrames(dontWait: true, sender: &sender) {
            guard frames.count >= 2, let message = try? GroupMessage.decode(frames[1...]) else {
                drop("a message on the group socket that is not LLG01", kind: "malformed")
                continue
            }
            let named = message.text("member")
            if let keys = configuration.keys {
                guard let member = keys.member(withKey: sender.userID) else {
                    drop("a \(message.command.rawValue) from a key that is no member's", kind: "stranger")
                    continue
                }
                if !named.isEmpty && named != member {
                    drop(
                        "a \(message.command.rawValue) naming member '\(named.escapedForLog)' sent with \(member)'s key",
                        kind: "impostor \(member)")
                    continue
                }
                return PeerMessage(peer: frames[0], message: message, sender: member)
            }
            return PeerMessage(peer: frames[0], message: message, sender: named)
        }
        return nil
    }

    /// Logs a dropped message the first time its `kind` is dropped, then at every power of ten of
    /// that kind's count: a peer that floods is not echoed, and one reason does not hide another.
    func drop(_ what: String, kind: String) {
        let count = dropped[kind, default: 0] + 1
        dropped[kind] = count
        let digits = String(count)
        if digits.first == "1" && digits.dropFirst().allSatisfy({ $0 == "0" }) {
            log("dropped \(what) (\(count) of this kind so far)")
        }
    }

    /// Answers one message of another member: ASK with this member's position, FETCH with its copy
    /// (both only under a term etcd shows the asker holds), JOIN and the like with REFUSE
    /// `not-leading` unless this member leads (the leader handles those itself).
    func answer(_ received: PeerMessage, as role: Role) {
        let (peer, message) = (received.peer, received.message)
        switch message.command {
        case .ask, .fetch:
            if message.text("group") != configuration.name {
                reply(
                    peer, Self.refusal(.notMember, "not of group \(configuration.name)", term: replica.term))
                return
            }
            let asked = message.number("term")
            let leading: UInt64? =
                switch role {
                case .standby: nil
                case .candidate(let term), .leader(let term): term
                }
            if asked < replica.term || (leading.map { asked <= $0 } ?? false) {
                reply(
                    peer,
                    Self.refusal(
                        .staleTerm, "term \(asked) is older than \(replica.term)", term: replica.term))
                return
            }
            // A leader does not stop to ask etcd: its own lease and key, watched every 100 ms,
            // tell it when another member won.
            if case .leader = role, asked != replica.term {
                drop(
                    "an \(message.command.rawValue) under term \(asked) by \(received.sender) while leading",
                    kind: "ask \(received.sender)")
                return
            }
            guard asked == replica.term || holdsKey(received.sender, term: asked) else { return }
            replica.adopt(term: asked)
            if message.command == .ask {
                reply(
                    peer,
                    GroupMessage(
                        .position,
                        [
                            "member": .string(configuration.member), "term": term,
                            "lastTerm": .int(Int64(replica.position.term)),
                            "index": .int(Int64(replica.position.index)),
                        ]))
            } else {
                reply(peer, Self.snapshot(replica, term: asked, commit: replica.position.index))
            }
        case .join, .ack, .beat, .append:
            switch role {
            case .standby:
                reply(
                    peer,
                    Self.refusal(.notLeading, "\(configuration.member) does not lead", term: replica.term))
            case .candidate(let term):
                reply(
                    peer,
                    Self.refusal(
                        .takingLead, "\(configuration.member) is taking the lead under term \(term)",
                        term: replica.term))
            case .leader: break
            }
        default: break
        }
    }

    /// A REFUSE: why (`code`, `error`) and the refuser's term.
    static func refusal(_ code: GroupMessage.Refusal, _ error: String, term: UInt64) -> GroupMessage {
        GroupMessage(
            .refuse, ["code": .string(code.rawValue), "error": .string(error), "term": .int(Int64(term))])
    }

    /// Logs `line` as the broker does.
    func logLine(_ line: String) { log(line) }

    private var term: JSONValue { .int(Int64(replica.term)) }

    private func reply(_ peer: [UInt8], _ message: GroupMessage) {
        _ = try? groupSocket.send(frames: [peer] + message.frames, dontWait: true)
    }

    /// A SNAPSHOT of `replica`'s files at its position.
    static func snapshot(_ replica: ReplicaDirectory, term: UInt64, commit: UInt64) -> GroupMessage {
        var blobs: [[UInt8]] = []
        for file in replica.snapshotFiles() { blobs += [Array(file.name.utf8), file.bytes] }
        return GroupMessage(
            .snapshot,
            [
                "term": .int(Int64(term)), "lastTerm": .int(Int64(replica.position.term)),
                "index": .int(Int64(replica.position.index)), "commit": .int(Int64(commit)),
            ], blobs: blobs)
    }
}
