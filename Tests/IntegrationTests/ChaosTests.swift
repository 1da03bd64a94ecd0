import Foundation
import Lifeline
import LifelineProtocol
import Synchronization
import Testing

@Suite("Real processes under faults: nothing lost, nothing twice", .serialized, .timeLimit(.minutes(3)))
struct ChaosTests {
    /// A fresh state directory for a broker and a journal file for a probe (the caller removes them).
    static func scratchFiles() -> (state: URL, journal: URL) {
        let directory = FileManager.default.temporaryDirectory
        return (
            directory.appendingPathComponent("lifeline-state-\(UUID().uuidString)"),
            directory.appendingPathComponent("lifeline-probe-\(UUID().uuidString).journal")
        )
    }

    /// A count from the environment (for the longer run of `bench/chaos.sh`), else `fallback`.
    static func setting(_ name: String, _ fallback: Int) -> Int {
        ProcessInfo.processInfo.environment[name].flatMap { Int($0) } ?? fallback
    }

    @Test(
        "a numbered stream while the broker and the service are killed -9 and restarted: each event handled once, in order"
    )
    func kills() async throws {
        try await streamThroughKills(posting: false)
    }

    @Test(
        "a loop of posts (coalesced, nobody awaits a receipt) while the broker and the service are killed -9: each event handled once, in order"
    )
    func postedKills() async throws {
        try await streamThroughKills(posting: true)
    }

    @Test(
        "a service that resumes from its journal and falls behind (2 ms a handler, a queue of 20) drops nothing: killed -9 mid-stream and restarted onto a backlog of many queues, it handles each event once, in order"
    )
    func slowResumingServiceLosesNothing() async throws {
        let total = 400
        let (state, journal) = Self.scratchFiles()
        defer {
            try? FileManager.default.removeItem(at: state)
            try? FileManager.default.removeItem(at: journal)
        }
        let broker = try await BrokerProcess(["--state-dir", state.path])
        defer { broker.process.kill() }
        let probeArguments = [
            "--name", "counter", "--events", "test.tick", "--journal", journal.path, "--delay-ms", "2",
            "--inbound-limit", "20", "--heartbeat-interval", "200", "--liveness", "2",
        ]
        var probe = try await broker.service("lifeline-probe", probeArguments)
        var logs: [String] = []
        let client = LifelineClient(broker: broker.control)
        func post(_ numbers: ClosedRange<Int>) async throws {
            for n in numbers { await client.post("test.tick", ["n": .int(Int64(n))], timeout: .seconds(30)) }
            try await client.flush()
        }
        func handled() -> Int {
            ((try? String(contentsOf: journal, encoding: .utf8)) ?? "").split(separator: "\n").count
        }
        try await post(1...(total / 2))
        try await LifecycleSemanticsTests.poll(seconds: 60) { handled() >= total / 8 }
        probe.kill(SIGKILL)
        _ = try await probe.waitForExit()
        logs += probe.lines(.stderr)
        print("killed the service after it handled \(handled()) of \(total / 2) events")
        try await post((total / 2 + 1)...total)
        probe = try await broker.service("lifeline-probe", probeArguments)
        try await LifecycleSemanticsTests.poll(seconds: 120) {
            ((try? String(contentsOf: journal, encoding: .utf8)) ?? "").contains("{\"n\":\(total)}")
        }
        probe.kill(SIGTERM)
        _ = try await probe.waitForExit()
        logs += probe.lines(.stderr)
        await client.close()
        let (handledEvents, lost, duplicated, outOfOrder) = try Self.tally(journal, total: total)
        let pauses = logs.filter { $0.contains("the handlers fell behind at #") }.count
        print(
            "slow resuming service: \(total) events, one kill -9: handled \(handledEvents.count), lost \(lost), duplicated \(duplicated), out of order \(outOfOrder); the handlers fell behind \(pauses) time(s)"
        )
        #expect(lost == 0 && duplicated == 0 && outOfOrder == 0)
        #expect(pauses > 0, "the queue of 20 did fill: the events came again from the journal")
        #expect(!logs.contains { $0.contains("dropped") }, "nothing was dropped")
    }

    /// Publishes a numbered stream, each event awaited or posted, through broker and service kills,
    /// and checks what the service's journal holds.
    private func streamThroughKills(posting: Bool) async throws {
        let total = Self.setting("LIFELINE_CHAOS_EVENTS", 3000)
        let brokerKills = Self.setting("LIFELINE_CHAOS_BROKER_KILLS", 2)
        let serviceKills = Self.setting("LIFELINE_CHAOS_SERVICE_KILLS", 2)
        // The kills spread evenly over the stream, the broker's among the service's.
        let count = brokerKills + serviceKills
        let plan = (0..<count).map { index in
            (
                at: total * (index + 1) / (count + 1),
                broker: (index + 1) * brokerKills / count > index * brokerKills / count
            )
        }
        let (state, journal) = Self.scratchFiles()
        defer {
            try? FileManager.default.removeItem(at: state)
            try? FileManager.default.removeItem(at: journal)
        }
        let brokerArguments = ["--journal-size", "\(max(20_000, total))", "--state-dir", state.path]
        var broker = try await BrokerProcess(brokerArguments)
        let (control, bus) = (broker.control, broker.bus)
        let probeArguments = [
            "--name", "counter", "--events", "test.tick", "--journal", journal.path, "--heartbeat-interval",
            "200",
            "--liveness", "2",
        ]
        var probe = try await broker.service("lifeline-probe", probeArguments)
        let client = LifelineClient(broker: control)
        let published = Atomic<Int>(0)
        let publisher = Task {
            for n in 1...total {
                if posting {
                    await client.post("test.tick", ["n": .int(Int64(n))], timeout: .seconds(30))
                    // A producer's pace, so that the kills fall inside the stream.
                    if n % 4 == 0 { try await Task.sleep(for: .milliseconds(2)) }
                } else {
                    try await client.publish("test.tick", ["n": .int(Int64(n))], timeout: .seconds(30))
                }
                published.store(n, ordering: .relaxed)
            }
            if posting { try await client.flush() }
        }
        for kill in plan {
            try await LifecycleSemanticsTests.poll(seconds: 120) {
                published.load(ordering: .relaxed) >= kill.at
            }
            if kill.broker {
                broker.process.kill(SIGKILL)
                _ = try await broker.process.waitForExit()
                print("killed the broker after \(published.load(ordering: .relaxed)) published events")
                broker = try await BrokerProcess(control: control, bus: bus, brokerArguments)
                try await broker.process.waitForLine(.stderr) {
                    $0.contains("restored") && $0.contains("journal event(s)")
                }
            } else {
                probe.kill(SIGKILL)
                _ = try await probe.waitForExit()
                print("killed the service after \(published.load(ordering: .relaxed)) published events")
                probe = try await broker.service("lifeline-probe", probeArguments)
            }
        }
        defer {
            broker.process.kill()
            probe.kill()
        }
        try await publisher.value
        // The journal, not the last process's output: a kill may fall after the last event was handled.
        try await LifecycleSemanticsTests.poll(seconds: 120) {
            ((try? String(contentsOf: journal, encoding: .utf8)) ?? "").contains("{\"n\":\(total)}")
        }
        probe.kill(SIGTERM)
        _ = try await probe.waitForExit()
        let (handled, lost, duplicated, outOfOrder) = try Self.tally(journal, total: total)
        print(
            "chaos\(posting ? " (posted)" : ""): \(total) events, \(brokerKills) broker kills, \(serviceKills) service kills: handled \(handled.count), lost \(lost), duplicated \(duplicated), out of order \(outOfOrder)"
        )
        #expect(lost == 0 && duplicated == 0 && outOfOrder == 0)
        #expect(handled == (1...Int64(total)).map { $0 }, "every event exactly once, in order")
        await client.close()
    }

    /// What a probe's journal holds of a stream numbered 1…`total`: the numbers in handling order,
    /// and how many were lost, handled twice or handled out of order.
    static func tally(_ journal: URL, total: Int) throws -> (
        handled: [Int64], lost: Int, duplicated: Int, outOfOrder: Int
    ) {
        let handled = try String(contentsOf: journal, encoding: .utf8).split(separator: "\n").map { line in
            try JSONParser.parse(String(line.split(separator: " ", maxSplits: 2)[2]))["n"]?.intValue ?? -1
        }
        let counts = Dictionary(grouping: handled, by: { $0 }).mapValues(\.count)
        return (
            handled, (1...Int64(total)).filter { counts[$0] == nil }.count,
            counts.values.filter { $0 > 1 }.count,
            zip(handled, handled.dropFirst()).filter { $0 >= $1 }.count
        )
    }

    /// Whether the gateway says someone is signed in (nil while it cannot be asked).
    static func signedIn(_ broker: BrokerProcess) async throws -> Bool? {
        let state = try await broker.cli(["call", "gateway", "state"])
        guard state.status == 0 else { return nil }
        return try JSONParser.parse(state.output)["signedIn"]?.boolValue
    }

    @Test(
        "the broker killed -9 at each step of `apps action` and its follow-ups: once it is back the stack and the gateway agree, nothing ran twice"
    )
    func brokerKilledDuringAppsAction() async throws {
        let rounds = Self.setting("LIFELINE_CHAOS_APPS_ROUNDS", 6)
        let state = FileManager.default.temporaryDirectory.appendingPathComponent(
            "lifeline-state-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: state) }
        let arguments = ["--state-dir", state.path, "--launcher", "launcher"]
        var broker = try await BrokerProcess(arguments)
        let (control, bus) = (broker.control, broker.bus)
        let gateway = try await broker.service("lifeline-gateway")
        let shell = try await broker.service("lifeline-shell")
        defer { for child in [shell, gateway, broker.process] { child.kill() } }
        #expect(try await broker.cli(["boot", "start"]).status == 0)
        try await shell.waitForLine { $0 == "CALLBACK s2 login didFinishLaunching" }
        // Where the fault strikes, by what the host has printed of the action's progress: at once,
        // when the action starts, when it is done (its finish asked for), and at each callback of
        // the follow-up changes (the exit, the parent's childDidFinish, the next app's creation).
        let killPoints: [(String, @Sendable (String) -> Bool)] = [
            ("at once", { _ in true }),
            ("when the action started", { $0.hasPrefix("ACTION ") && $0.hasSuffix(" started") }),
            ("when the action was done", { $0.hasPrefix("ACTION ") && $0.hasSuffix(" done") }),
            ("at willTerminate", { $0.hasPrefix("CALLBACK ") && $0.hasSuffix(" willTerminate") }),
            ("at childDidFinish", { $0.hasPrefix("CALLBACK ") && $0.contains(" childDidFinish ") }),
            ("at didCreate", { $0.hasPrefix("CALLBACK ") && $0.hasSuffix(" didCreate") }),
        ]
        for round in 0..<rounds {
            let (point, reached) = killPoints[round % killPoints.count]
            guard let before = try await Self.signedIn(broker) else {
                Issue.record("the gateway did not answer before round \(round)")
                return
            }
            let action =
                before
                ? ["apps", "action", "home", "signOut"]
                : ["apps", "action", "login", "signIn", #"{"user":"bo","password":"secret"}"#]
            let started = {
                shell.lines().filter { $0.hasPrefix("ACTION ") && $0.hasSuffix(" started") }.count
            }
            let startedBefore = started()
            let linesBefore = shell.lines().count
            let cli = try ChildProcess(
                "lifeline", action + ["--timeout", "3000"], environment: ["LIFELINE_BROKER": control])
            let killBy = ContinuousClock.now + .seconds(5)
            while point != "at once", !shell.lines().dropFirst(linesBefore).contains(where: reached),
                ContinuousClock.now < killBy
            {
                try await Task.sleep(for: .milliseconds(1))  // polling the host's output with a deadline
            }
            broker.process.kill(SIGKILL)
            _ = try await broker.process.waitForExit()
            broker = try await BrokerProcess(control: control, bus: bus, arguments)
            let status = try await cli.waitForExit(seconds: 30)
            if started() > startedBefore {
                // The host got the action: it finishes it (retrying its gateway call) whatever the CLI heard.
                let count = shell.lines().filter { $0.hasPrefix("ACTION ") && !$0.hasSuffix(" started") }
                    .count
                if count < started() {
                    try await shell.waitForLine(seconds: 30) {
                        $0.hasPrefix("ACTION ") && !$0.hasSuffix(" started")
                    }
                }
            }
            var after: Bool?
            var apps: [String] = []
            let deadline = ContinuousClock.now + .seconds(30)
            while ContinuousClock.now < deadline {
                after = try await Self.signedIn(broker)
                apps = try await ContextTests.stack(broker).compactMap { $0["app"]?.stringValue }
                if let after, apps == ["launcher", after ? "home" : "login"] { break }
                try await Task.sleep(for: .milliseconds(50))  // polling with a deadline
            }
            print(
                "apps chaos round \(round): broker killed \(point) of `\(action[3])`: CLI exit \(status), signed in \(before) → \(after.map(String.init) ?? "?"), stack \(apps)"
            )
            let agreed = after.map { apps == ["launcher", $0 ? "home" : "login"] } ?? false
            #expect(agreed, "the stack matches the gateway's state")
            if !agreed {
                print("gateway stderr: \(gateway.lines(.stderr).suffix(12).joined(separator: "\n"))")
                print("shell stderr: \(shell.lines(.stderr).suffix(12).joined(separator: "\n"))")
                print("broker stderr: \(broker.process.lines(.stderr).suffix(12).joined(separator: "\n"))")
            }
            if status == 0 { #expect(after != before, "the CLI said done: the sign-in state changed") }
        }
        let created = shell.lines().filter { $0.hasPrefix("CALLBACK ") && $0.hasSuffix(" didCreate") }
        #expect(Set(created).count == created.count, "no session was created twice")
    }
}
