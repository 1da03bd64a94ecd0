import LifelineProtocol
import LifelineSupport
import ZeroMQ

/// A standby's link to its leader: a DEALER to the leader's group socket. It joins (again every
/// half second until a snapshot comes), installs the snapshot, applies each entry in order and
/// acknowledges it; an entry out of order makes it join again.
struct Follower {
    let member: String
    let log: @Sendable (String) -> Void
    private var socket: ZMQSocket?
    private var leader: MemberRecord?
    private var group = ""
    private var heard: UInt64 = 0
    private var joined: UInt64 = 0
    /// The DEALER to the leader, while following one (to wait on).
    var link: ZMQSocket? { socket }
    /// A snapshot of the current leader is installed.
    private(set) var synced = false

    init(member: String, log: @escaping @Sendable (String) -> Void) {
        self.member = member
        self.log = log
    }

    /// Follows `record` (nothing changes when it already does).
    mutating func follow(
        _ record: MemberRecord, context: ZMQContext, replica: ReplicaDirectory, group: String
    ) {
        if leader?.member == record.member, leader?.term == record.term, socket != nil { return }
        close()
        guard let dealer = try? ZMQSocket(context, type: .dealer) else { return }
        try? dealer.set(.linger, 0)
        guard (try? dealer.connect(record.replicate)) != nil else {
            log("cannot connect to the leader's group socket \(record.replicate)")
            dealer.close()
            return
        }
        socket = dealer
        leader = record
        self.group = group
        replica.adopt(term: record.term)
        heard = SystemClock.monotonicNanoseconds()
        join(replica)
    }

    private mutating func join(_ replica: ReplicaDirectory) {
        guard let socket, let leader else { return }
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
                log("the leader \(leader.member) refused this member: \(message.text("error"))")
                if term > replica.term {
                    close()
                } else {
                    // Another run (or no broker) answers where the leader was: it is gone.
                    heard = 0
                }
                return
            }
            guard term >= replica.term else {
                send(
                    GroupMessage(
                        .refuse,
                        [
                            "error": .string("term \(term) is older than \(replica.term)"),
                            "term": .int(Int64(replica.term)),
                        ]))
                continue
            }
            replica.adopt(term: term)
            heard = now
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

    /// Whether the followed leader was heard from within `duration`.
    func alive(within duration: Duration) -> Bool { socket != nil && !silent(longerThan: duration) }

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
