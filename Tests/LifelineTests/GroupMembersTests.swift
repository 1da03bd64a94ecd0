import Testing

@testable import Lifeline

/// The one rule of leader-following, which the SDK's connection and the CLI's client share.
@Suite("Group members: a member's word on the leader first, then the next member", .timeLimit(.minutes(1)))
struct GroupMembersTests {
    @Test("the first member first; a leader hint is followed until that connection is lost")
    func followsTheLeader() {
        var members = GroupMembers(["tcp://a:1", "tcp://b:1", "tcp://c:1"])
        #expect(members.current == "tcp://a:1" && members.isGroup)
        let moved = members.follow("tcp://c:1")
        #expect(moved && members.current == "tcp://c:1")
        let again = members.follow("tcp://c:1")
        #expect(!again, "the leader in use is no move")
        // Lost: the hint is forgotten and the list goes on after the last member it used.
        let advanced = members.advance()
        #expect(advanced && members.current == "tcp://b:1")
    }

    @Test("a lost member gives way to the next one on the list, round and round")
    func advancesInTurn() {
        var members = GroupMembers(["tcp://a:1", "tcp://b:1", "tcp://c:1"])
        var seen: [String] = []
        for _ in 0..<4 {
            members.advance()
            seen.append(members.current)
        }
        #expect(seen == ["tcp://b:1", "tcp://c:1", "tcp://a:1", "tcp://b:1"])
    }

    @Test("members to avoid are skipped; with every member avoided it stays where it is")
    func avoids() {
        var members = GroupMembers(["tcp://a:1", "tcp://b:1", "tcp://c:1"])
        let skipped = members.advance(avoiding: ["tcp://b:1"])
        #expect(skipped && members.current == "tcp://c:1")
        let stayed = members.advance(avoiding: ["tcp://a:1", "tcp://b:1"])
        #expect(!stayed && members.current == "tcp://c:1")
        // Following a leader that is not listed, with every member avoided: the leader stays.
        var led = GroupMembers(["tcp://a:1", "tcp://b:1"])
        _ = led.follow("tcp://z:1")
        let kept = led.advance(avoiding: ["tcp://a:1", "tcp://b:1"])
        #expect(!kept && led.current == "tcp://z:1")
        let one = GroupMembers(["ipc:///tmp/broker"])
        #expect(!one.isGroup && one.current == "ipc:///tmp/broker")
    }
}
