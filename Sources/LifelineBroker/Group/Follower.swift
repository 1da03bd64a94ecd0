import LifelineProtocol
import LifelineSupport
import ZeroMQ

/// A standby's link to its leader: a DEALER to the leader's group socket. It joins (again every
/// half second until a snapshot comes), installs the snapshot, applies each entry in order and
/// acknowledges it; an entry out of order makes it join again.
struct Follower {
    let member: String
    let log: @Sendable (String) -> Void
    /// Makes the DEALER to a leader's group socket (a CURVE client of that member's key).
    var connect: (MemberRecord) -> ZMQSocket? = { _ in nil }
    private var socket: ZMQSocket?
    private var leader: MemberRecord?
    private var group = ""
    private var heard: UInt64 = 0
    /// Whether the followed leader has sent a message of its term since it was followed (anything
    /// but a REFUSE): until then it may still be starting (restoring its state from its copy).
    private var spoke = false
    /// `heard` as the last excused absence left it.
    private var excusedAt: UInt64?
    private var joined: UInt64 = 0
    private var dropped = 0
    /// The replica, once following (for a JOIN sent on a refusal).
    private var joining: ReplicaDirectory?
    /// The DEALER to the leader, while following one (to wait on).
    var link: ZMQSocket? { socket }
    /// A snapshot of the current leader is installed.
    private(set) var synced = false

    init(member: String, log: @escaping @Sendable (String) -> Void) {
        self.member = member
        self.log = log
    }

    /// Follows `record` (nothing changes when it already does).
    mutating func follow(_ record: MemberRecord, replica: ReplicaDirectory, group: String) {
        if leader?.member == record.member, leader?.term == record.term, socket != nil { return }
        close()
        guard let dealer = connect(record) else { return }
        socket = dealer
        leader = record
        self.group = group
        replica.adopt(term: record.term)
        heard = SystemClock.monotonicNanoseconds()
        spoke = false
        join(replica)
    }

    private mutating func join(_ given: ReplicaDirectory?) {
        if let given { joining = given }
        guard let socket, let leader, let replica = joining else { return }
        joined = SystemClock.monotonicNanoseconds()
        synced = false
        _ = try? socket.send(
            frames: GroupMessage(
                .join,
                [
                    "group": .string(group), "member": .string(member), "term": .int(Int64(leader.term)),
                    "lastTerm": .int(Int64(replica.position.term)),
                    "index": .int(Int64(replica.position.index)),
                ]
            ).frames, dontWait: true)
    }

    /// Handles what the leader sent.
    mutating func drain(replica: ReplicaDirectory) {
        guard let socket, let leader else { return }
        let now = SystemClock.monotonicNanoseconds()
        if !synced && now &- joined > 500_000_000 { join(replica) }
        while let frames = try? socket.receiveFrames(dontWait: true) {
            guard let message = try? GroupMessage.decode(frames[...]) else {
                log("ignored a message from the leader that is not LLG01")
                continue
            }
            let term = message.number("term")
            if message.command == .refuse {
                refused(message, by: leader, now: now)
                return
            }
            // An older term than this member took (from etcd, or a candidate etcd vouched for) is
            // refused; the leader's term is the one etcd showed, and a message under another is not
            // believed.
            if term < replica.term {
                send(
                    GroupMember.refusal(
                        .staleTerm, "term \(term) is older than \(replica.term)", term: replica.term))
                continue
            }
            guard term == leader.term else {
                dropped += 1
                if dropped == 1 || dropped % 1000 == 0 {
                    log(
                        "dropped a \(message.command.rawValue) under term \(term) from \(leader.member), which leads under term \(leader.term) as etcd says (\(dropped) so far)"
                    )
                }
                continue
            }
            heard = now
            if message.command != .refuse { spoke = true }
            switch message.command {
            case .snapshot:
                do {
                    try replica.install(GroupMember.files(message.blobs), at: message.position)
                    synced = true
                    acknowledge(replica)
                } catch {
                    log("could not install the leader's snapshot: \(error)")
                }
            case .append:
                guard synced else { continue }
                let index = message.number("index")
                guard index == replica.position.index + 1 else {
                    log("entry \(index) came after \(replica.position.index); joining again for a snapshot")
                    join(replica)
                    return
                }
                do {
                    let operations = try StateOperation.decode(message.blobs[...])
                    try replica.apply(operations, at: ReplicaPosition(term: term, index: index))
                    acknowledge(replica)
                } catch {
                    log("could not apply entry \(index): \(error); joining again for a snapshot")
                    join(replica)
                    return
                }
            case .beat:
                // Also the standby's heartbeat: a leader drops followers it does not hear from.
                if synced { acknowledge(replica) }
            default: break
            }
        }
    }

    /// A REFUSE from the member etcd names as leader. One still taking the lead is alive: it is
    /// heard from, and joined again in 100 ms, so a new leader is not voted out while it starts. One
    /// that does not count this member among its standbys is joined again at once. Any other (a
    /// standby holding the key it failed to give up, say) is no sign of life: its silence runs on
    /// and its lease is revoked after the usual 600 ms.
    private mutating func refused(_ message: GroupMessage, by leader: MemberRecord, now: UInt64) {
        synced = false
        switch message.refusal {
        case .takingLead:
            heard = now
            joined = now &- 400_000_000
        case .notFollowing:
            heard = now
            join(nil)
        case .notLeading:
            joined = now &- 400_000_000
        default:
            log("the leader \(leader.member) refused this member: \(message.text("error"))")
        }
    }

    private func acknowledge(_ replica: ReplicaDirectory) {
        send(
            GroupMessage(
                .ack,
                [
                    "member": .string(member), "term": .int(Int64(replica.term)),
                    "index": .int(Int64(replica.position.index)),
                ]))
    }

    private func send(_ message: GroupMessage) {
        _ = try? socket?.send(frames: message.frames, dontWait: true)
    }

    /// This member did not run until `now` (stopped, starved): what the leader sent meanwhile may
    /// still wait unread, so its silence counts from `now` — once between two messages from it, so
    /// that a leader that died is still suspected after the next absence. Returns false when it
    /// follows no leader or was excused already since the leader last spoke.
    mutating func excuseAbsence(now: UInt64) -> Bool {
        guard socket != nil, heard != excusedAt else { return false }
        heard = max(heard, now)
        excusedAt = heard
        return true
    }

    /// Whether the followed leader was heard from within `duration`.
    func alive(within duration: Duration) -> Bool { socket != nil && !silent(longerThan: duration) }

    /// How long a leader just followed may take to send its first message: starting to lead
    /// (restoring the state from its copy of the journal) may take seconds on a busy machine, and a
    /// leader suspected meanwhile would be voted out before it could beat — and the next one the
    /// same way. A leader that dies while it starts stops renewing its etcd lease, which expires on
    /// its own.
    static let firstMessageWindow: Duration = .seconds(10)

    /// Whether the followed leader should be suspected: silent for `failoverAfter` since its last
    /// message, or, before its first, for ``firstMessageWindow``.
    func overdue(failoverAfter: Duration) -> Bool {
        silent(longerThan: spoke ? failoverAfter : max(failoverAfter, Self.firstMessageWindow))
    }

    /// Whether the followed leader has said nothing for `duration`.
    func silent(longerThan duration: Duration) -> Bool {
        socket != nil && SystemClock.monotonicNanoseconds() &- heard > UInt64(duration.wholeNanoseconds)
    }

    mutating func close() {
        socket?.close()
        socket = nil
        leader = nil
        synced = false
    }
}
