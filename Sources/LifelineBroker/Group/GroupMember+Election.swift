import Foundation
import LifelineProtocol
import LifelineSupport
import ZeroMQ

/// How a member that won etcd's leader key becomes leader: it asks a majority for their positions
/// and takes the furthest copy (``elect(term:members:)``), and how any member checks a later term
/// against etcd before it believes it (``holdsKey(_:term:)``).
extension GroupMember {
    /// Whether etcd's leader key was created under `term` and names `member`: the proof a member
    /// needs before it takes a later term (a message alone, from anyone, cannot move it).
    func holdsKey(_ member: String, term: UInt64) -> Bool {
        let now = SystemClock.monotonicNanoseconds()
        if now &- lastUnprovedClaim < 20_000_000 {
            drop("a claim of term \(term) by \(member) right after an unproved one", kind: "term \(member)")
            return false
        }
        let held: EtcdClient.Entry?
        do {
            held = try etcd.get(configuration.leaderKey)
        } catch {
            lastUnprovedClaim = SystemClock.monotonicNanoseconds()
            drop("\(member)'s term \(term): etcd cannot be asked (\(error.message))", kind: "etcd")
            return false
        }
        guard let held, held.createRevision == term, MemberRecord(held.value)?.member == member else {
            lastUnprovedClaim = SystemClock.monotonicNanoseconds()
            let holder =
                held.flatMap { MemberRecord($0.value) }.map {
                    "\($0.member)'s term \(held?.createRevision ?? 0)"
                } ?? "no leader"
            drop(
                "a claim of term \(term) by \(member): etcd's leader key holds \(holder)",
                kind: "term \(member)")
            return false
        }
        return true
    }

    /// A DEALER to `member`'s group socket at `endpoint`, a CURVE client that accepts only that
    /// member's key as the server's (nil when it cannot be made).
    func dealer(to member: String, at endpoint: String) -> ZMQSocket? {
        guard let socket = try? ZMQSocket(context, type: .dealer) else { return nil }
        do {
            try socket.set(.linger, 0)
            if let keys = configuration.keys {
                guard let serverKey = keys.publicKeys[member] else {
                    log("no public key for member \(member) in --group-keys")
                    socket.close()
                    return nil
                }
                try socket.secureAsClient(keys.pair, serverKey: serverKey)
            }
            try socket.connect(endpoint)
            return socket
        } catch {
            log("cannot connect to \(member)'s group socket \(endpoint): \(error)")
            socket.close()
            return nil
        }
    }

    /// Gathers the positions of a majority under `term` and takes the furthest copy among them.
    /// Returns the position this member then holds, or nil when no majority answered in time.
    func elect(term: UInt64, members: [MemberRecord]) -> ReplicaPosition? {
        replica.adopt(term: term)
        let needed = configuration.quorum - 1
        log("won the leader key under term \(term); asking \(members.count) member(s) for their positions")
        var askers: [String: ZMQSocket] = [:]
        defer { for socket in askers.values { socket.close() } }
        for member in members {
            guard let socket = dealer(to: member.member, at: member.replicate) else { continue }
            _ = try? socket.send(
                frames: GroupMessage(
                    .ask,
                    [
                        "group": .string(configuration.name), "member": .string(configuration.member),
                        "term": .int(Int64(term)),
                    ]
                ).frames, dontWait: true)
            askers[member.member] = socket
        }
        var positions: [String: ReplicaPosition] = [:]
        let deadline = SystemClock.monotonicNanoseconds() &+ 1_500_000_000
        // Fewer members reachable than a majority needs: give the key up at once.
        while positions.count < needed && askers.count >= needed {
            if SystemClock.monotonicNanoseconds() >= deadline || isStopping { break }
            for (member, socket) in askers where positions[member] == nil {
                guard let frames = try? socket.receiveFrames(dontWait: true),
                    let message = try? GroupMessage.decode(frames[...])
                else { continue }
                if message.command == .refuse {
                    log("\(member) refused term \(term): \(message.text("error"))")
                    return nil
                }
                if message.command == .position, message.number("term") == term {
                    positions[member] = message.position
                }
            }
            answerPeers(as: .candidate(term))
            usleep(2_000)
        }
        guard positions.count >= needed else {
            log(
                "only \(positions.count) of the \(needed) other member(s) a majority needs answered; giving the key up"
            )
            return nil
        }
        let mine = replica.position
        guard let (best, furthest) = positions.max(by: { $0.value < $1.value }), furthest > mine else {
            log("leading from this member's copy (\(mine))")
            return mine
        }
        log("\(best) holds a further copy (\(furthest)) than this member (\(mine)); fetching it")
        guard let socket = askers[best] else { return nil }
        _ = try? socket.send(
            frames: GroupMessage(
                .fetch,
                [
                    "group": .string(configuration.name), "member": .string(configuration.member),
                    "term": .int(Int64(term)),
                ]
            ).frames, dontWait: true)
        let fetchDeadline = SystemClock.monotonicNanoseconds() &+ 3_000_000_000
        while SystemClock.monotonicNanoseconds() < fetchDeadline && !isStopping {
            if let frames = try? socket.receiveFrames(dontWait: true),
                let message = try? GroupMessage.decode(frames[...]), message.command == .snapshot,
                message.number("term") == term
            {
                do {
                    try replica.install(Self.files(message.blobs), at: message.position)
                    return replica.position
                } catch {
                    log("could not install \(best)'s copy: \(error)")
                    return nil
                }
            }
            answerPeers(as: .candidate(term))
            usleep(2_000)
        }
        log("\(best) did not send its copy in time; giving the key up")
        return nil
    }

    /// The (name, bytes) pairs of a snapshot's blobs.
    static func files(_ blobs: [[UInt8]]) -> [(name: String, bytes: [UInt8])] {
        stride(from: 0, to: blobs.count - 1, by: 2).map {
            (String(decoding: blobs[$0], as: UTF8.self), blobs[$0 + 1])
        }
    }
}
