import Foundation
import Lifeline
import LifelineProtocol
import Synchronization
import Testing

@Suite(
    "Real processes: dispatch, completions, acknowledgements, snapshots, replay", .serialized,
    .timeLimit(.minutes(3)))
struct LifecycleSemanticsTests {
    static func eventLines(_ probe: ChildProcess) throws -> [JSONValue] {
        try probe.lines().filter { $0.hasPrefix("EVENT ") }.map {
            try JSONParser.parse(String($0.dropFirst(6)))
        }
    }

    @Test(
        "dispatch offers the event by priority; a rewritten URL reaches the next service; the first decision ends it"
    )
    func orderedDispatch() async throws {
        let broker = try await BrokerProcess()
        let rewriter = try await broker.service(
            "lifeline-probe",
            [
                "--name", "rewriter", "--events", "openURL", "--priority", "10", "--rewrite",
                "url=app://rewritten",
            ])
        let reader = try await broker.service(
            "lifeline-probe", ["--name", "reader", "--events", "openURL", "--priority", "5"])
        let decider = try await broker.service(
            "lifeline-probe",
            ["--name", "decider", "--events", "openURL", "--priority", "1", "--answer", "returnYES"])
        let skipped = try await broker.service(
            "lifeline-probe", ["--name", "skipped", "--events", "openURL"])
        defer { for child in [rewriter, reader, decider, skipped, broker.process] { child.kill() } }

        let result = try await broker.cli(["dispatch", "openURL", "url=app://original", "--json"])
        #expect(result.status == 0)
        let outcome = try DispatchOutcome(json: try JSONParser.parse(result.output))
        #expect(outcome.trace.map(\.service) == ["rewriter", "reader", "decider"])
        #expect(outcome.result == .returnYES && outcome.returnValue == true && outcome.decidedBy == "decider")
        #expect(outcome.payload == ["url": "app://rewritten"])
        #expect(try Self.eventLines(reader).first?["payload"] == ["url": "app://rewritten"])
        #expect(try Self.eventLines(skipped).isEmpty)

        let text = try await broker.cli(["dispatch", "openURL", "url=app://x"])
        #expect(text.stdout.first == "openURL dispatch #2: returnYES (decided by decider)")
    }

    @Test(
        "a Swift client's lifecycle event out of order is refused (409) and published with force: true, as 'lifeline publish --force'"
    )
    func forcedFromSwift() async throws {
        let broker = try await BrokerProcess()
        defer { broker.process.kill() }
        let client = LifelineClient(broker: broker.control, credentials: nil)
        await #expect {
            try await client.publish(Lifecycle.DidBecomeActive())
        } throws: {
            ($0 as? LifelineError)?.code == .conflict
        }
        let forced = try await client.publish(Lifecycle.DidBecomeActive(), force: true)
        #expect(forced.event == .didBecomeActive)
        await #expect {
            try await client.publish(.didFinishLaunching)
        } throws: {
            ($0 as? LifelineError)?.code == .conflict
        }
        let json = try await client.publish(.didFinishLaunching, force: true)
        #expect(json.event == .didFinishLaunching && json.sequence > forced.sequence)
        await client.close()
    }

    @Test("a step that misses its deadline and a service killed mid-step are both skipped on time")
    func deadlineAndDeath() async throws {
        let broker = try await BrokerProcess()
        let slow = try await broker.service(
            "lifeline-probe",
            [
                "--name", "slow", "--events", "continueUserActivity", "--priority", "3", "--step-deadline",
                "300", "--delay-ms", "5000",
            ])
        let mortal = try await broker.service(
            "lifeline-probe",
            [
                "--name", "mortal", "--events", "continueUserActivity", "--priority", "2", "--delay-ms",
                "10000", "--heartbeat-interval", "200", "--liveness", "2",
            ])
        let last = try await broker.service(
            "lifeline-probe", ["--name", "last", "--events", "continueUserActivity", "--answer", "return"])
        let client = LifelineClient(broker: broker.control)
        defer { for child in [slow, mortal, last, broker.process] { child.kill() } }

        let started = ContinuousClock.now
        async let outcome = client.dispatch(
            .continueUserActivity, ["activityType": "handoff"], stepTimeout: .seconds(5))
        try await mortal.waitForLine(startingWith: "BEGIN continueUserActivity")
        mortal.kill(SIGKILL)
        let verdict = try await outcome
        let elapsed = ContinuousClock.now - started
        #expect(verdict.trace.map(\.status) == ["timeout", "gone", "answered"])
        #expect(verdict.trace.map(\.service) == ["slow", "mortal", "last"])
        #expect(verdict.decidedBy == "last" && verdict.returnValue == true)
        // Which deadline ended each step, not how fast the machine was: the slow step's own 300 ms
        // and the dead one's expiry, each far below the dispatch's 5 s step timeout.
        #expect(
            verdict.trace.prefix(2).allSatisfy { $0.durationMicroseconds < 4_000_000 },
            "\(verdict.trace.map { "\($0.service) \($0.durationMicroseconds / 1000) ms" })")
        print(
            "dispatch with a missed deadline and a killed service finished in \(elapsed); steps: \(verdict.trace.map { "\($0.service) \($0.status) \($0.durationMicroseconds / 1000) ms" })"
        )
        await client.close()
    }

    @Test(
        "completions combine across processes exactly once, also when nobody handles the event or a handler dies"
    )
    func completions() async throws {
        let broker = try await BrokerProcess()
        let client = LifelineClient(broker: broker.control)
        defer { broker.process.kill() }
        #expect(try await client.dispatch(.performFetch).completion == "noData")

        let fresh = try await broker.service(
            "lifeline-probe", ["--name", "fresh", "--events", "performFetch", "--completion", #""newData""#])
        let stale = try await broker.service(
            "lifeline-probe", ["--name", "stale", "--events", "performFetch", "--completion", #""noData""#])
        let doomed = try await broker.service(
            "lifeline-probe",
            [
                "--name", "doomed", "--events", "performFetch", "--delay-ms", "20000", "--heartbeat-interval",
                "200", "--liveness", "2",
            ])
        defer { for child in [fresh, stale, doomed] { child.kill() } }
        async let outcome = client.dispatch(.performFetch)
        try await doomed.waitForLine(startingWith: "BEGIN performFetch")
        doomed.kill(SIGKILL)
        let verdict = try await outcome
        #expect(verdict.completion == "newData")
        #expect(Set(verdict.trace.map(\.status)) == ["answered", "gone"])
        let noData = try await broker.cli(["dispatch", "performFetch", "--json"])
        #expect(try JSONParser.parse(noData.output)["completion"] == "newData")
        await client.close()
    }

    @Test("an acknowledged broadcast reports the service that was killed")
    func acknowledgedBroadcast() async throws {
        let broker = try await BrokerProcess()
        let keeper = try await broker.service(
            "lifeline-probe", ["--name", "keeper", "--events", "willTerminate"])
        let goner = try await broker.service(
            "lifeline-probe",
            [
                "--name", "goner", "--events", "willTerminate", "--heartbeat-interval", "200", "--liveness",
                "50",
            ])
        defer { for child in [keeper, goner, broker.process] { child.kill() } }
        #expect(try await broker.cli(["publish", "didFinishLaunching"]).status == 0)
        goner.kill(SIGKILL)
        let result = try await broker.cli(["publish", "willTerminate"])
        #expect(result.status == 1)
        #expect(
            result.stdout.first?.hasSuffix("to 2 subscribed services; acknowledged by 1 of 2 (keeper)")
                == true)
        #expect(result.stdout.last == "lifecycle: launching → terminating")
        // Its closed connection says so at once, long before its 10 s heartbeat window ends.
        #expect(
            result.errors.contains(
                "goner did not acknowledge: service lost its connection before acknowledging"),
            "\(result.errors)")
        try await keeper.waitForLine { $0.contains("willTerminate") }
    }

    @Test("a late joiner starts from the snapshot: the current state and sequence, then only live events")
    func lateJoiner() async throws {
        let broker = try await BrokerProcess()
        defer { broker.process.kill() }
        for event in ["didFinishLaunching", "didBecomeActive"] {
            #expect(try await broker.cli(["publish", event]).status == 0)
        }
        #expect(try await broker.cli(["boot", "wait"]).status == 0)
        let sequence =
            try JSONParser.parse(try await broker.cli(["status", "--json"]).output)["sequence"]?.intValue ?? 0
        let late = try ChildProcess(
            "lifeline-probe", ["--broker", broker.control, "--events", "didBecomeActive,willResignActive"])
        defer { late.kill() }
        let ready = try await late.waitForLine(startingWith: "READY ")
        #expect(
            ready.hasSuffix("sequence=\(sequence) lifecycle=active"),
            "the snapshot: the state at the sequence it is valid at")
        #expect(try await broker.cli(["publish", "willResignActive"]).status == 0)
        try await late.waitForLine { $0.contains("willResignActive") }
        #expect(try Self.eventLines(late).map { $0["event"] } == ["willResignActive"])
        let status = try await broker.cli(["status"])
        #expect(status.stdout.first == "lifecycle:  inactive")
        let refused = try await broker.cli(["publish", "willEnterForeground"])
        #expect(
            refused.status == 1
                && refused.errors.contains(
                    "willEnterForeground makes no sense while the application is inactive")
        )
    }

    @Test(
        "10 000 events while the service is killed and restarted twice: each handled exactly once, in order")
    func exactlyOnceAcrossRestarts() async throws {
        let broker = try await BrokerProcess(["--journal-size", "20000"])
        let journal = FileManager.default.temporaryDirectory.appendingPathComponent(
            "lifeline-probe-\(UUID().uuidString).journal")
        defer { try? FileManager.default.removeItem(at: journal) }
        let arguments = [
            "--name", "counter", "--events", "test.tick", "--journal", journal.path, "--heartbeat-interval",
            "200", "--liveness", "2",
        ]
        var probe = try await broker.service("lifeline-probe", arguments)
        defer { broker.process.kill() }
        let client = LifelineClient(broker: broker.control)
        let published = Atomic<Int>(0)
        let kills = Atomic<Int>(0)
        let total = 10_000
        let killPoints = [3000, 6000]
        // At each kill point the publisher holds until the counter is dead, then goes on publishing
        // while it is down and while it restarts: the kills land mid-stream by construction.
        let publisher = Task {
            for n in 1...total {
                try await client.publish("test.tick", ["n": .int(Int64(n))])
                published.store(n, ordering: .relaxed)
                if let index = killPoints.firstIndex(of: n) {
                    try await Self.poll(seconds: 60) { kills.load(ordering: .relaxed) > index }
                }
            }
        }
        for killAt in killPoints {
            try await Self.poll(seconds: 60) { published.load(ordering: .relaxed) >= killAt }
            probe.kill(SIGKILL)
            _ = try await probe.waitForExit()
            kills.add(1, ordering: .relaxed)
            probe = try await broker.service("lifeline-probe", arguments)
            print(
                "killed the counter after \(published.load(ordering: .relaxed)) published events and restarted it"
            )
        }
        try await publisher.value
        try await probe.waitForLine(seconds: 60) { $0.contains("\"n\":\(total)") }
        probe.kill(SIGTERM)
        let handled = try String(contentsOf: journal, encoding: .utf8).split(separator: "\n").map { line in
            try JSONParser.parse(String(line.split(separator: " ", maxSplits: 2)[2]))["n"]?.intValue ?? -1
        }
        #expect(handled.count == total)
        #expect(handled == (1...Int64(total)).map { $0 }, "every event exactly once, in order")
        await client.close()
    }

    @Test(
        "with a state directory the application's lifecycle state outlives a broker killed -9; a clean stop ends the application (notRunning)"
    )
    func lifecycleAcrossRestarts() async throws {
        let state = FileManager.default.temporaryDirectory.appendingPathComponent(
            "lifeline-lifecycle-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: state) }
        func lifecycle(_ broker: BrokerProcess) async throws -> JSONValue? {
            try JSONParser.parse(try await broker.cli(["status", "--json"]).output)["lifecycle"]
        }
        let first = try await BrokerProcess(["--state-dir", state.path])
        #expect(try await first.cli(["publish", "didFinishLaunching"]).status == 0)
        #expect(try await first.cli(["publish", "didBecomeActive"]).status == 0)
        first.process.kill(SIGKILL)
        _ = try await first.process.waitForExit()

        let second = try await BrokerProcess(
            control: first.control, bus: first.bus, ["--state-dir", state.path])
        #expect(try await lifecycle(second) == "active", "kept across a kill -9")
        // Its services may be on their way back: a missing one is 503 (retry) for a while, not 404.
        let early = try await second.cli(["lookup", "nobody"])
        #expect(
            early.status == 1
                && early.errors.contains(
                    "no service named 'nobody' has registered yet: this broker started again on its state directory"
                ),
            "\(early.errors)")
        let resign = try await second.cli(["publish", "willResignActive"])
        #expect(resign.status == 0, "\(resign.errors)")
        let relaunch = try await second.cli(["publish", "didFinishLaunching"])
        #expect(
            relaunch.status == 1 && relaunch.errors.contains("didFinishLaunching makes no sense while"),
            "no second launch: \(relaunch.errors)")
        second.process.kill(SIGTERM)
        _ = try await second.process.waitForExit()

        let third = try await BrokerProcess(
            control: first.control, bus: first.bus, ["--state-dir", state.path])
        defer { third.process.kill() }
        #expect(try await lifecycle(third) == "notRunning", "a clean stop ended the application")
        #expect(try await third.cli(["publish", "didFinishLaunching"]).status == 0)
    }

    /// Waits until `condition` holds, checking every 10 ms, failing after `seconds`.
    static func poll(seconds: Double, until condition: () -> Bool) async throws {
        let deadline = ContinuousClock.now + .seconds(seconds)
        while !condition() {
            guard ContinuousClock.now < deadline else {
                throw HarnessError("condition not met within \(seconds) s")
            }
            try await Task.sleep(for: .milliseconds(10))  // polling with a deadline
        }
    }
}
