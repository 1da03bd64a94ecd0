import Foundation
import Lifeline
import LifelineProtocol
import Testing

@Suite(
    "Real processes: the CLI and the SDK find a group's leader the same way", .serialized,
    .timeLimit(.minutes(3)))
struct GroupClientTests {
    @Test(
        "a standby's refusal is marked and names the leader; a request it refused reaches the leader; a service's own error is answered once",
        .enabled(
            if: EtcdProcess.available, "etcd is not installed (deploy/test.sh installs etcd-server as root)"))
    func standbyRefusalsAreFollowed() async throws {
        let rig = try await GroupRig(services: 1, events: 10)
        defer { rig.stop() }
        let leader = try #require(rig.leader)
        let standbys = rig.members.filter { $0.name != leader.name }
        let hello = ClientRequest.hello.controlRequest(id: Array("r1".utf8)).frames()
        let replies = try RawPeer.exchange(with: standbys[0].control, messages: [hello])
        let reply = try #require(replies.first.flatMap { try? ControlMessage.decode($0[...]) })
        guard case .reply(let refusal) = reply else {
            Issue.record("not a reply: \(reply)")
            return
        }
        #expect(refusal.status == .unavailable)
        #expect(
            refusal.standbyRefusal == .leaderAt(leader.control),
            "\(String(decoding: refusal.body, as: UTF8.self))")

        // The CLI given a standby alone, and a list that starts with the standbys.
        let alone = try await CLIResult.run(["services", "--broker", standbys[0].control])
        #expect(alone.status == 0 && alone.output.contains("counter1"), "\(alone.output) \(alone.errors)")
        let standbysFirst = (standbys.map(\.control) + [leader.control]).joined(separator: ",")
        let listed = try await CLIResult.run(["lookup", "counter1", "--broker", standbysFirst])
        #expect(listed.status == 0, "\(listed.errors)")
        let missing = try await CLIResult.run(["call", "counter1", "nosuch", "--broker", standbysFirst])
        #expect(missing.status == 1 && missing.errors.contains("404"), "\(missing.output) \(missing.errors)")

        // The SDK's client: its first request is answered by the leader, not refused.
        let client = LifelineClient(broker: standbysFirst, credentials: nil)
        let record = try await client.lookup("counter1")
        #expect(record.name == "counter1")
        await client.close()
    }
}
