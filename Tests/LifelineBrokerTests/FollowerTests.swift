import Foundation
import LifelineProtocol
import Testing
import ZeroMQ

@testable import LifelineBroker

@Suite("A standby's link to its leader, against a scripted leader socket", .timeLimit(.minutes(1)))
struct FollowerTests {
    /// A scripted leader: a ROUTER the follower's DEALER joins, and the follower's replica.
    final class Rig {
        let router: ZMQSocket
        let endpoint: String
        let replica: ReplicaDirectory
        let directory: URL
        var follower: Follower
        var peer: [UInt8] = []

        init() throws {
            router = try ZMQSocket(ZMQContext.shared, type: .router)
            try router.set(.linger, 0)
            try router.bind("tcp://127.0.0.1:*")
            endpoint = try router.lastEndpoint()
            directory = FileManager.default.temporaryDirectory.appendingPathComponent(
                "lifeline-follower-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            replica = try ReplicaDirectory(path: directory.path, group: "g", member: "b")
            follower = Follower(member: "b", log: { _ in })
            follower.connect = { record in
                let socket = try? ZMQSocket(ZMQContext.shared, type: .dealer)
                try? socket?.set(.linger, 0)
                try? socket?.connect(record.replicate)
                return socket
            }
            var record = MemberRecord(member: "a", control: [], bus: [], replicate: endpoint)
            record.term = 5
            follower.follow(record, replica: replica, group: "g")
        }

        deinit {
            follower.close()
            router.close()
            try? FileManager.default.removeItem(at: directory)
        }

        /// The next message the follower sent, driving it meanwhile (5 s at most).
        func next() throws -> GroupMessage? {
            let deadline = Date().addingTimeInterval(5)
            while Date() < deadline {
                follower.drain(replica: replica)
                if let frames = try router.receiveFrames(dontWait: true), frames.count >= 2 {
                    peer = frames[0]
                    return try GroupMessage.decode(frames[1...])
                }
                usleep(2_000)
            }
            return nil
        }

        func send(_ message: GroupMessage) throws {
            _ = try router.send(frames: [peer] + message.frames)
        }
    }

    @Test(
        "a leader still taking the lead is alive: joined again in ~100 ms, its silence clock not run down (no lease revoked while it starts)"
    )
    func takingLeadIsNotSilence() throws {
        let rig = try Rig()
        let join = try rig.next()
        #expect(join?.command == .join)
        try rig.send(GroupMember.refusal(.takingLead, "a is taking the lead under term 5", term: 5))
        let again = try rig.next()
        #expect(again?.command == .join, "joined again after the refusal")
        #expect(!rig.follower.silent(longerThan: .seconds(10)), "a refusal counts as hearing from the leader")
    }

    @Test(
        "a leader just followed is not suspected for its silence until its first message's window (it may be restoring its state); after its first message, the usual window"
    )
    func firstMessageWindow() throws {
        let rig = try Rig()
        #expect(try rig.next()?.command == .join)
        // The scenario: the leader says nothing for 100 ms, past a 50 ms failover window.
        usleep(100_000)
        #expect(rig.follower.silent(longerThan: .milliseconds(50)))
        #expect(!rig.follower.overdue(failoverAfter: .milliseconds(50)), "still starting: not suspected")
        try rig.send(GroupMessage(.beat, ["term": 5, "commit": 0]))
        var heard = false
        for _ in 0..<500 where !heard {
            rig.follower.drain(replica: rig.replica)
            heard = !rig.follower.silent(longerThan: .milliseconds(50))
            usleep(1_000)
        }
        #expect(heard, "the beat was read")
        usleep(100_000)
        #expect(rig.follower.overdue(failoverAfter: .milliseconds(50)), "it spoke: the usual window")
    }

    @Test(
        "a standby that holds the key refuses 'not leading': that is no sign of life, so its silence runs on (and its lease is revoked as usual)"
    )
    func notLeadingIsNoSignOfLife() throws {
        let rig = try Rig()
        #expect(try rig.next()?.command == .join)
        try rig.send(GroupMember.refusal(.notLeading, "a does not lead", term: 5))
        #expect(try rig.next()?.command == .join, "joined again after the refusal")
        #expect(rig.follower.silent(longerThan: .milliseconds(50)), "silent since it was followed")
    }

    @Test(
        "a message under a term etcd did not show is dropped: a forged later term is not taken, an older one is refused"
    )
    func termsComeFromEtcd() throws {
        let rig = try Rig()
        #expect(try rig.next()?.command == .join)
        let forged = GroupMessage(
            .snapshot,
            ["term": .int(1 << 62), "lastTerm": .int(1 << 62), "index": .int(99), "commit": .int(99)])
        try rig.send(forged)
        try rig.send(GroupMessage(.beat, ["term": .int(3), "commit": .int(0)]))
        let refusal = try rig.next()
        #expect(refusal?.command == .refuse && refusal?.refusal == .staleTerm, "an older term is refused")
        #expect(rig.replica.term == 5, "the forged term was not taken")
        #expect(rig.replica.position.index == 0, "the forged snapshot was not installed")
    }
}
