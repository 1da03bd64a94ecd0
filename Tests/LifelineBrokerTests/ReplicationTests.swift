import Foundation
import LifelineProtocol
import Testing

@testable import LifelineBroker

@Suite(
    "Group replication without sockets: commit by majority, order of output, the wire, the copy",
    .timeLimit(.minutes(1)))
struct ReplicationTests {
    typealias Log = ReplicationLog<String>

    @Test("output waits until a majority holds its entry; steps without changes wait behind it, in order")
    func majority() {
        var log = Log(term: 7, groupSize: 3, after: ReplicaPosition(term: 5, index: 10))
        log.join(peer: [1], member: "b", now: 0)
        log.join(peer: [2], member: "c", now: 0)
        let first = log.add([.appendJournal([1])], output: ["reply 1"])
        #expect(first.entry?.index == 11 && first.release.isEmpty, "nothing leaves before a standby holds it")
        #expect(log.add([], output: ["lookup answer"]).release.isEmpty, "a read waits behind the entry")
        let second = log.add([.appendJournal([2])], output: ["reply 2"])
        #expect(second.entry?.index == 12 && second.release.isEmpty)
        let committed = log.acknowledge(peer: [2], index: 11, now: 1) ?? []
        #expect(committed.map(\.index) == [11])
        #expect(committed.flatMap(\.output) == ["reply 1", "lookup answer"])
        #expect(log.committed == ReplicaPosition(term: 7, index: 11))
        #expect(log.acknowledge(peer: [1], index: 12, now: 2)?.flatMap(\.output) == ["reply 2"])
        #expect(!log.isHolding)
        #expect(
            log.add([], output: ["free"]).release.flatMap(\.output) == ["free"], "nothing pending: at once")
    }

    @Test("an acknowledgement of an unknown peer asks it to join; a rejoin replaces the member's peer")
    func joining() {
        var log = Log(term: 3, groupSize: 3, after: .empty)
        #expect(log.acknowledge(peer: [9], index: 0, now: 0) == nil)
        log.join(peer: [1], member: "b", now: 0)
        log.join(peer: [2], member: "b", now: 0)
        #expect(log.followers.count == 1 && log.followers[[2]]?.member == "b")
    }

    @Test("five members: three must hold an entry; stale and lagging followers are dropped")
    func fiveMembers() {
        var log = Log(term: 1, groupSize: 5, after: .empty, maximumLag: 2)
        for (peer, member) in zip(1...4, ["b", "c", "d", "e"]) {
            log.join(peer: [UInt8(peer)], member: member, now: 0)
        }
        _ = log.add([.beginTerm(1)], output: ["first"])
        #expect(
            log.acknowledge(peer: [1], index: 1, now: 5)?.isEmpty == true, "two of five are not a majority")
        #expect(log.acknowledge(peer: [2], index: 1, now: 5)?.flatMap(\.output) == ["first"])
        for step in 0..<3 { _ = log.add([.appendJournal([UInt8(step)])], output: []) }
        _ = log.acknowledge(peer: [1], index: 4, now: 6)
        #expect(log.dropStale(heardBefore: 3) == ["c", "d", "e"], "d, e silent since 0; c 3 entries behind")
        #expect(log.followers.values.map(\.member) == ["b"])
    }

    @Test("group messages and state operations survive the wire; bad ones are named")
    func wire() throws {
        let operations: [StateOperation] = [
            .appendJournal([1, 2]), .rewriteJournal([3]),
            .replace(file: "sessions.json", bytes: Array("{}".utf8)),
            .beginTerm(42),
        ]
        let message = GroupMessage(.append, ["term": 4, "index": 9], blobs: operations.flatMap(\.frames))
        let decoded = try GroupMessage.decode(message.frames[...])
        #expect(decoded == message && decoded.number("index") == 9)
        #expect(try StateOperation.decode(decoded.blobs[...]) == operations)
        #expect(throws: GroupProtocolError.self) {
            try StateOperation.decode([Array("R:../../etc/passwd".utf8), []][...])
        }
        #expect(throws: GroupProtocolError.self) {
            try GroupMessage.decode([Array("LLG01".utf8), Array("NOPE".utf8), []][...])
        }
        #expect(
            StateOperation.of([
                .record([1]), .record([2]), .log("x"), .persist(file: "boot.json", document: [:]),
            ])
                == [.appendJournal([1, 2]), .replace(file: "boot.json", bytes: Array("{}".utf8))])
    }

    @Test(
        "a copy applies entries, installs snapshots, keeps its position and term, and refuses another group's directory"
    )
    func copy() throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent(
            "replica-\(UUID().uuidString)"
        ).path
        defer { try? FileManager.default.removeItem(atPath: path) }
        let replica = try ReplicaDirectory(path: path, group: "g", member: "a")
        try replica.apply(
            [.appendJournal([1, 2]), .appendJournal([3])], at: ReplicaPosition(term: 2, index: 1))
        try replica.apply([.replace(file: "boot.json", bytes: [4])], at: ReplicaPosition(term: 2, index: 2))
        #expect(replica.snapshotFiles().map(\.name) == ["journal.log", "boot.json"])
        #expect(replica.snapshotFiles().first?.bytes == [1, 2, 3])
        replica.adopt(term: 5)
        replica.adopt(term: 3)
        let reopened = try ReplicaDirectory(path: path, group: "g", member: "a")
        #expect(reopened.position == ReplicaPosition(term: 2, index: 2) && reopened.term == 5)
        try reopened.install([("journal.log", [9])], at: ReplicaPosition(term: 4, index: 7))
        #expect(
            reopened.snapshotFiles().map(\.name) == ["journal.log"], "files the snapshot lacks are removed")
        #expect(throws: GroupSetupError.self) { try ReplicaDirectory(path: path, group: "h", member: "a") }
        #expect(throws: GroupSetupError.self) { try ReplicaDirectory(path: path, group: "g", member: "b") }
    }

    @Test("positions compare term first")
    func positions() {
        #expect(ReplicaPosition(term: 2, index: 1) > ReplicaPosition(term: 1, index: 100))
        #expect(ReplicaPosition(term: 2, index: 3) > ReplicaPosition(term: 2, index: 2))
    }
}
