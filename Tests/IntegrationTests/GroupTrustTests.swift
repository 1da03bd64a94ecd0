import Foundation
import Glibc
import Lifeline
import LifelineProtocol
import LifelineSupport
import Testing
import ZeroMQ

/// What a peer that is not a member gets from a group (nothing), what a forged term does (nothing),
/// and what a leader paused past its lease sends once it resumes (nothing).
@Suite(
    "Real processes: a broker group's trust — members by key, terms from etcd, fencing before every output",
    .serialized, .timeLimit(.minutes(5)),
    .enabled(if: EtcdProcess.available, "etcd is not installed (deploy/test.sh installs etcd-server as root)")
)
struct GroupTrustTests {
    /// An LLG01 message as a raw peer would write it.
    static func message(_ command: String, _ header: String) -> [[UInt8]] {
        [Array("LLG01".utf8), Array(command.utf8), Array(header.utf8)]
    }

    /// The group messages an outsider tries: a copy (FETCH), a standby's place (JOIN in member b's
    /// name), an acknowledgement and a term no election made.
    static let attacks: [[[UInt8]]] = [
        message("FETCH", #"{"group":"demo","member":"b","term":1}"#),
        message("JOIN", #"{"group":"demo","member":"b","term":1,"lastTerm":0,"index":0}"#),
        message("ACK", #"{"member":"b","term":1,"index":1}"#),
        message("ASK", #"{"group":"demo","member":"b","term":4611686018427387904}"#),
    ]

    /// Sends `messages` to `endpoint` on one DEALER (a CURVE client when `curve` is given) and
    /// returns what came back within `seconds`.
    static func replies(
        from endpoint: String, to messages: [[[UInt8]]], curve: (keys: CurveKeyPair, server: String)? = nil,
        seconds: Int = 2
    ) async throws -> [[[UInt8]]] {
        try await OffPool.run {
            try blockingReplies(from: endpoint, to: messages, curve: curve, seconds: seconds)
        }
    }

    private static func blockingReplies(
        from endpoint: String, to messages: [[[UInt8]]], curve: (keys: CurveKeyPair, server: String)?,
        seconds: Int
    ) throws -> [[[UInt8]]] {
        let socket = try ZMQSocket(ZMQContext.shared, type: .dealer)
        defer { socket.close() }
        try socket.set(.linger, 0)
        if let curve { try socket.secureAsClient(curve.keys, serverKey: curve.server) }
        try socket.connect(endpoint)
        for message in messages { _ = try socket.send(frames: message, dontWait: true) }
        var received: [[[UInt8]]] = []
        var poller = ZMQPoller()
        poller.add(socket)
        while try poller.poll(timeoutMilliseconds: seconds * 1000) > 0 {
            while let frames = try socket.receiveFrames(dontWait: true) { received.append(frames) }
        }
        return received
    }

    /// Kills the leader and waits until a publish is accepted again; returns the seconds it took.
    static func failover(_ rig: GroupRig) async throws -> Double {
        guard let leader = rig.leader else { throw HarnessError("no member leads") }
        let killed = ContinuousClock.now
        leader.process.kill(SIGKILL)
        try await rig.showingLogs {
            try await LifecycleSemanticsTests.poll(seconds: 30) {
                rig.members.contains { $0 !== leader && $0.role == "READY" }
            }
        }
        let publish = try await rig.cli(["publish", "openURL", "url=app://after", "--timeout", "20000"])
        #expect(publish.status == 0, "a publish after the failover: \(publish.errors)")
        return BrokerGroupTests.seconds(since: killed)
    }

    @Test(
        "under --key a standby's control socket is what the leader's is: a stranger (plain text, or a key off the policy) gets nothing, a key on it the 503 naming the leader, and a client given that standby alone reaches the leader; SIGHUP reads the policy again on every member, a dropped key then gets nothing, and no member stops"
    )
    func standbysSpeakCurve() async throws {
        let security = try SecuritySetup(keys: ["ops", "watcher"])
        defer { security.remove() }
        try security.writePolicy(["ops": SecurityTests.admin])
        let etcd = try await EtcdProcess()
        let state = FileManager.default.temporaryDirectory.appendingPathComponent(
            "lifeline-group-\(UUID().uuidString)")
        let names = ["a", "b", "c"]
        let keys = state.appendingPathComponent("keys")
        try GroupRig.makeKeys(names, in: keys)
        var members: [GroupMemberProcess] = []
        defer {
            for member in members { member.process.kill() }
            etcd.stop()
            try? FileManager.default.removeItem(at: state)
        }
        for name in names {
            members.append(
                try await GroupMemberProcess(
                    name, group: "demo", members: names, etcd: etcd.url, state: state,
                    extra: security.brokerArguments, keys: keys))
        }
        let group = members
        try await LifecycleSemanticsTests.poll(seconds: 30) {
            group.filter { $0.role == "READY" }.count == 1 && group.filter { $0.role == "STANDBY" }.count == 2
        }
        guard let standby = group.first(where: { $0.role == "STANDBY" }),
            let leader = group.first(where: { $0.role == "READY" })
        else { return }
        let hello = [Array("LLC01".utf8), Array("HELLO".utf8), Array("h1".utf8), Array("{}".utf8)]
        let brokerKey = try KeyFile.publicKey(security.path("broker.pub"))
        let plain = try await Self.replies(from: standby.control, to: [hello])
        #expect(plain.isEmpty, "a standby answered a plain-text client: \(plain)")
        let stranger = try await Self.replies(
            from: standby.control, to: [hello], curve: (try CurveKeyPair.generate(), brokerKey))
        #expect(stranger.isEmpty, "a standby answered a key off the policy: \(stranger)")
        let ops = try CurveKeyPair(secretKey: KeyFile.readPair(security.path("ops.key")).secretKey)
        let listed = try await Self.replies(from: standby.control, to: [hello], curve: (ops, brokerKey))
        let body = listed.first.map { String(decoding: $0.last ?? [], as: UTF8.self) } ?? ""
        #expect(listed.first?[3] == Array("503".utf8), "\(body)")
        #expect(body.contains(#""standby":true"#) && body.contains(leader.control), "\(body)")
        let status = try await CLIResult.run(
            ["status", "--broker", standby.control] + security.keyArguments("ops"))
        #expect(status.status == 0, "\(status.errors)")
        // A policy without ops, read again on SIGHUP: the standby refuses ops from then on, and no
        // member ends.
        try security.writePolicy(["watcher": SecurityTests.admin])
        for member in group { member.process.kill(SIGHUP) }
        for member in group {
            try await member.process.waitForLine(.stderr, seconds: 10) {
                $0.contains("received SIGHUP; reading the policy again")
            }
        }
        try await leader.process.waitForLine(.stderr, seconds: 10) { $0.contains("reloaded ") }
        let dropped = try await Self.replies(from: standby.control, to: [hello], curve: (ops, brokerKey))
        #expect(dropped.isEmpty, "a standby answered a key its reloaded policy dropped: \(dropped)")
        let after = try await CLIResult.run(
            ["status", "--broker", standby.control] + security.keyArguments("ops"))
        #expect(after.status == 1, "\(after.output)")
        for member in group {
            #expect(kill(member.process.pid, 0) == 0, "member \(member.name) ended at SIGHUP")
        }
        print(
            "group trust under --key: a standby gave a stranger 0 messages, an allowed key the leader's address"
        )
    }

    @Test(
        "a peer without a member's key gets nothing from any member — no snapshot, no entry, no answer — plain text or CURVE; the group still elects after it"
    )
    func strangersGetNothing() async throws {
        let rig = try await GroupRig(services: 1, events: 10)
        defer { rig.stop() }
        let coldStart = rig.termsWon
        let stranger = try CurveKeyPair.generate()
        for member in rig.members {
            let plain = try await Self.replies(from: member.replicate, to: Self.attacks)
            #expect(
                plain.isEmpty, "member \(member.name) answered a plain-text peer: \(plain.map { $0.count })")
            let server = try KeyFile.publicKey(rig.keys.appendingPathComponent("\(member.name).pub").path)
            let curve = try await Self.replies(
                from: member.replicate, to: Self.attacks, curve: (stranger, server))
            #expect(
                curve.isEmpty, "member \(member.name) answered a stranger's key: \(curve.map { $0.count })")
        }
        for member in rig.members {
            try await member.process.waitForLine(.stderr, seconds: 10) {
                $0.contains("refused a CURVE handshake") && $0.contains(stranger.publicKey)
            }
        }
        let seconds = try await Self.failover(rig)
        print(
            "group trust: strangers got 0 messages from 3 members; terms won at the cold start: \(coldStart); a failover after the attacks: next publish accepted \(String(format: "%.2f", seconds)) s after the kill"
        )
    }

    @Test(
        "a forged ASK with term 2^62 (plain-text group, in member b's name) is dropped by every member, logged; a JOIN and an ACK under an older term are refused stale-term by the leader; the group elects the next leader as usual"
    )
    func forgedTermIsDropped() async throws {
        let rig = try await GroupRig(services: 1, events: 10, secure: false)
        defer { rig.stop() }
        let ask = Self.message("ASK", #"{"group":"demo","member":"b","term":4611686018427387904}"#)
        for member in rig.members {
            let answers = try await Self.replies(from: member.replicate, to: [ask, ask])
            #expect(
                !answers.contains { $0.count > 1 && $0[1] == Array("POSITION".utf8) },
                "member \(member.name) took the forged term")
        }
        for member in rig.members where member.role == "STANDBY" {
            try await member.process.waitForLine(.stderr, seconds: 10) {
                $0.contains("a claim of term 4611686018427387904 by b")
            }
        }
        // A JOIN and an ACK under a term older than the leader's are refused, not counted: what a
        // standby holds under an earlier term is not this term's.
        guard let leader = rig.leader else { throw HarnessError("no member leads") }
        let stale = [
            Self.message("JOIN", #"{"group":"demo","member":"b","term":1,"lastTerm":0,"index":0}"#),
            Self.message("ACK", #"{"member":"b","term":1,"index":1000000}"#),
        ]
        let refusals = try await Self.replies(from: leader.replicate, to: stale)
        #expect(
            refusals.count == 2
                && refusals.allSatisfy {
                    $0.count == 3 && $0[1] == Array("REFUSE".utf8)
                        && (try? JSONParser.parse($0[2]))?["code"] == "stale-term"
                },
            "the leader's answers to a JOIN and an ACK under term 1: \(refusals.map { $0.map { String(decoding: $0, as: UTF8.self) } })"
        )
        let before = rig.termsWon
        let seconds = try await Self.failover(rig)
        print(
            "group trust: a forged term 2^62 dropped by 3 members; the next leader elected and a publish accepted \(String(format: "%.2f", seconds)) s after the kill; terms won: \(before) → \(rig.termsWon)"
        )
    }

    @Test(
        "a leader paused (SIGSTOP) past its lease under a stream, holding a publish its standbys acknowledge while it is paused, a client sending to it meanwhile: once resumed it answers nothing and puts nothing on its bus, round after round"
    )
    func pausedLeaderSendsNothing() async throws {
        let rounds = ChaosTests.setting("LIFELINE_PAUSE_ROUNDS", 20)
        let rig = try await GroupRig(services: 1, events: 100_000)
        defer { rig.stop() }
        let stream = TickPublisher(brokers: rig.brokers, total: 100_000)
        let publisher = Task { try await stream.run() }
        defer { publisher.cancel() }
        let coldStart = rig.termsWon
        var answered = 0
        var events = 0
        for round in 1...rounds {
            guard let leader = rig.leader else {
                Issue.record("no member leads before round \(round)")
                break
            }
            let standbys = rig.members.filter { $0 !== leader }
            let bus = try ZMQSocket(ZMQContext.shared, type: .sub)
            defer { bus.close() }
            try bus.set(.linger, 0)
            try bus.set(.subscribe, Array("test.fenced".utf8) + [0])
            try bus.connect(leader.localBus)
            let standbyLines = leader.process.lines().filter { $0.hasPrefix("STANDBY ") }.count
            // A publish the leader holds: its standbys are paused, so no majority has its entry yet.
            for standby in standbys { standby.process.kill(SIGSTOP) }
            let held = try ZMQSocket(ZMQContext.shared, type: .dealer)
            defer { held.close() }
            try held.set(.linger, 0)
            try held.connect(leader.localControl)
            _ = try held.send(frames: Self.publish("held\(round)"), dontWait: true)
            // The scenario, not a readiness wait: the entry reaches the paused standbys' sockets.
            try await Task.sleep(for: .milliseconds(300))
            leader.process.kill(SIGSTOP)
            let paused = ContinuousClock.now
            // The standbys take the entry and acknowledge it to the paused leader, then elect another.
            for standby in standbys { standby.process.kill(SIGCONT) }
            let client = try ZMQSocket(ZMQContext.shared, type: .dealer)
            defer { client.close() }
            try client.set(.linger, 0)
            try client.connect(leader.localControl)
            for id in 1...3 {
                _ = try client.send(frames: Self.publish("paused\(round).\(id)"), dontWait: true)
            }
            try await rig.showingLogs {
                try await LifecycleSemanticsTests.poll(seconds: 30) {
                    standbys.contains { $0.role == "READY" }
                }
            }
            // The scenario, not a readiness wait: a pause past the lease (TTL 2 s) as the paused
            // leader itself counts it.
            try await Task.sleep(until: paused + .milliseconds(2_600))
            leader.process.kill(SIGCONT)
            try await rig.showingLogs {
                try await LifecycleSemanticsTests.poll(seconds: 30) {
                    leader.process.lines().filter { $0.hasPrefix("STANDBY ") }.count > standbyLines
                }
            }
            for socket in [held, client] {
                while let frames = try socket.receiveFrames(dontWait: true) {
                    if frames.count >= 4, frames[1] == Array("REPLY".utf8), frames[3] == Array("200".utf8) {
                        answered += 1
                    }
                }
            }
            while (try bus.receiveFrames(dontWait: true)) != nil { events += 1 }
        }
        let published = stream.published
        publisher.cancel()
        print(
            "group trust: \(rounds) rounds of SIGSTOP past the lease under a stream (\(published) events published), each holding a publish its standbys acknowledged during the pause: answers from the resumed leader \(answered), events on its bus \(events); terms won \(coldStart) at the cold start, \(rig.termsWon) after \(rounds) pauses (one election each would make \(coldStart + rounds))"
        )
        #expect(answered == 0, "a leader resumed past its lease answered \(answered) request(s)")
        #expect(events == 0, "a leader resumed past its lease put \(events) event(s) on its bus")
        await stream.client.close()
    }

    /// A PUBLISH of `test.fenced` as a raw client writes it.
    static func publish(_ id: String) -> [[UInt8]] {
        [
            Array("LLC01".utf8), Array("PUBLISH".utf8), Array(id.utf8),
            Array(#"{"event":"test.fenced"}"#.utf8),
            Array("{}".utf8),
        ]
    }
}
