import Foundation
import Lifeline
import LifelineProtocol
import Testing

@Suite("Real processes: the boot loader", .serialized, .timeLimit(.minutes(2)))
struct BootTests {
    static func report(_ broker: BrokerProcess) async throws -> JSONValue {
        try JSONParser.parse(try await broker.cli(["boot", "report", "--json"]).output)
    }

    static func task(_ report: JSONValue, _ name: String) -> (
        start: Int64, end: Int64, state: String, reason: String?
    ) {
        let task = report["tasks"]?.arrayValue?.first { $0["name"]?.stringValue == name }
        let start = task?["startMs"]?.intValue ?? -1
        return (
            start, start + (task?["durationMs"]?.intValue ?? 0), task?["state"]?.stringValue ?? "",
            task?["reason"]?.stringValue
        )
    }

    @Test("a boot waiting for the topology's services names those it waits for in its report")
    func waitingReportNamesTheMissing() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "lifeline-boot-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let topology = directory.appendingPathComponent("topology.json").path
        let document: JSONValue = [
            "broker": ["control": "tcp://127.0.0.1:*", "bus": "tcp://127.0.0.1:*"],
            "services": [["name": "ghost", "executable": "lifeline-probe"]],
        ]
        try Data(JSONWriter.encode(document)).write(to: URL(fileURLWithPath: topology))
        let broker = try await BrokerProcess(["--topology", topology, "--boot-wait", "60000"])
        #expect(try await broker.cli(["boot", "start"]).status == 0)
        let report = try await Self.report(broker)
        #expect(report["state"] == "waiting")
        #expect(report["missing"] == ["ghost"], "\(report)")
    }

    @Test(
        "a boot across three services: a dependency from one process to another holds and asynchronous tasks overlap"
    )
    func crossProcessBoot() async throws {
        let broker = try await BrokerProcess()
        let alpha = try await broker.service(
            "lifeline-probe",
            ["--name", "alpha", "--tasks", #"[{"name": "prepare", "phase": "setup", "ms": 150}]"#])
        let beta = try await broker.service(
            "lifeline-probe",
            [
                "--name", "beta", "--tasks",
                #"[{"name": "fetch", "async": true, "ms": 250, "after": ["alpha.prepare"]}, {"name": "index", "async": true, "ms": 250}]"#,
            ])
        let gamma = try await broker.service(
            "lifeline-probe",
            [
                "--name", "gamma", "--tasks",
                #"[{"name": "render", "ms": 50, "after": ["beta.fetch"]}, {"name": "push", "ms": 10, "launchOption": "remoteNotification"}]"#,
            ])
        defer { for child in [alpha, beta, gamma, broker.process] { child.kill() } }

        #expect(
            try await broker.cli(["publish", "didFinishLaunching", #"launchOptions:={"url": "app://x"}"#])
                .status == 0)
        let wait = try await broker.cli(["boot", "wait"])
        #expect(wait.status == 0 && wait.stdout.last?.hasPrefix("boot #1 done in") == true)
        let report = try await Self.report(broker)
        let (prepare, fetch, index, render) = (
            Self.task(report, "alpha.prepare"), Self.task(report, "beta.fetch"),
            Self.task(report, "beta.index"), Self.task(report, "gamma.render")
        )
        #expect([prepare.state, fetch.state, index.state, render.state] == ["done", "done", "done", "done"])
        #expect(prepare.end <= fetch.start, "beta.fetch waited for alpha.prepare in another process")
        #expect(fetch.end <= render.start, "gamma.render waited for beta.fetch")
        #expect(fetch.start < index.end && index.start < fetch.end, "the asynchronous tasks overlapped")
        #expect(
            Self.task(report, "gamma.push").reason
                == "condition: launch option 'remoteNotification' is not set")
        #expect(report["launchOptions"] == ["url": "app://x"])
        #expect(report["criticalChain"]?.arrayValue?.contains("alpha.prepare") == true)
        print("boot: prepare \(prepare), fetch \(fetch), index \(index), render \(render)")

        let text = try await broker.cli(["boot", "report"])
        #expect(text.stdout.contains("critical chain (@start +duration):"))
        let again = try await broker.cli(["boot", "run", "beta.index"])
        #expect(again.status == 1 && again.errors.contains("beta.index already ran in boot #1"))
        let svg = FileManager.default.temporaryDirectory.appendingPathComponent(
            "boot-\(UUID().uuidString).svg")
        defer { try? FileManager.default.removeItem(at: svg) }
        #expect(try await broker.cli(["boot", "report", "--svg", svg.path]).status == 0)
        #expect(try String(contentsOf: svg, encoding: .utf8).contains("critical chain"))
    }

    @Test("boot wait --timeout bounds the wait (below the default 120 s too): with no boot it says so")
    func bootWaitTimeout() async throws {
        let broker = try await BrokerProcess()
        defer { broker.process.kill() }
        let started = ContinuousClock.now
        let wait = try await broker.cli(["boot", "wait", "--timeout", "2s"])
        #expect(wait.status == 1 && wait.errors.contains("no boot started within 2000 ms"), "\(wait.errors)")
        print("boot wait --timeout 2s ended after \(BrokerGroupTests.seconds(since: started)) s")
    }

    @Test("a cycle is refused before anything runs, naming it; a required failure stops the boot")
    func refusalsAndFailures() async throws {
        let broker = try await BrokerProcess()
        let loop = try await broker.service(
            "lifeline-probe",
            [
                "--name", "loop", "--tasks",
                #"[{"name": "a", "after": ["loop.b"]}, {"name": "b", "after": ["loop.a"]}]"#,
            ])
        defer { loop.kill(); broker.process.kill() }
        let start = try await broker.cli(["boot", "start"])
        #expect(
            start.status == 1
                && start.output.contains("boot #1 refused: dependency cycle: loop.a → loop.b → loop.a"),
            "\(start.output)")
        let refused = try await broker.cli(["boot", "wait"])
        #expect(
            refused.status == 1
                && refused.output.contains("boot refused: dependency cycle: loop.a → loop.b → loop.a"))
        #expect(!loop.lines().contains { $0.hasPrefix("TASK") }, "nothing ran")
        loop.kill()
        _ = try await loop.waitForExit()

        let second = try await BrokerProcess()
        let fragile = try await second.service(
            "lifeline-probe",
            [
                "--name", "fragile", "--tasks",
                #"[{"name": "keys", "phase": "setup", "required": true, "fail": true}, {"name": "later", "ms": 1}]"#,
            ])
        defer { fragile.kill(); second.process.kill() }
        #expect(try await second.cli(["boot", "start"]).status == 0)
        let failed = try await second.cli(["boot", "wait"])
        #expect(
            failed.status == 1
                && failed.output.contains("required task fragile.keys failed: keys told to fail"))
        let later = Self.task(try await Self.report(second), "fragile.later")
        #expect(later.state == "skipped", "nothing new starts, and the report says so")
        #expect(later.reason == "the boot stopped: required task fragile.keys failed: keys told to fail")
    }

    @Test(
        "a boot the broker was killed in the middle of is reported failed after the restart, its unfinished task too; didBecomeActive does not boot again"
    )
    func interruptedBoot() async throws {
        let state = FileManager.default.temporaryDirectory.appendingPathComponent(
            "lifeline-boot-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: state) }
        let first = try await BrokerProcess(["--state-dir", state.path])
        let service = try await first.service(
            "lifeline-probe", ["--name", "slow", "--tasks", #"[{"name": "warm", "ms": 60000}]"#])
        defer { service.kill() }
        #expect(try await first.cli(["publish", "didFinishLaunching"]).status == 0)
        try await service.waitForLine { $0 == "TASK slow.warm" }
        let waiter = try ChildProcess("lifeline", ["boot", "wait", "--broker", first.control])
        defer { waiter.kill() }
        try await waiter.waitForLine { $0 == "waiting for boot #1 to finish …" }
        first.process.kill(SIGKILL)
        _ = try await first.process.waitForExit()

        let second = try await BrokerProcess(
            control: first.control, bus: first.bus, ["--state-dir", state.path])
        defer { second.process.kill() }
        #expect(try await waiter.waitForExit(seconds: 30) == 1, "boot wait learns that the restart ended it")
        #expect(
            waiter.lines(.stdout).contains("boot #1 failed: the broker stopped while boot #1 was running"))
        let report = try await Self.report(second)
        #expect(report["boot"] == 1 && report["state"] == "failed" && report["restored"] == true, "\(report)")
        #expect(report["error"] == "the broker stopped while boot #1 was running")
        #expect(Self.task(report, "slow.warm").state == "failed")
        #expect(try await second.cli(["publish", "didBecomeActive"]).status == 0)
        #expect(try await Self.report(second)["restored"] == true, "no second boot on didBecomeActive")
    }

    @Test(
        "run-once tasks run once ever, remembered across a broker restart, with the last boot's report and number"
    )
    func runOnceAcrossRestarts() async throws {
        let state = FileManager.default.temporaryDirectory.appendingPathComponent(
            "lifeline-boot-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: state) }
        let arguments = [
            "--name", "migrator", "--tasks",
            #"[{"name": "migrate", "phase": "runOnce", "runOnce": true, "ms": 5}]"#,
        ]
        let first = try await BrokerProcess(["--state-dir", state.path])
        let service = try await first.service("lifeline-probe", arguments)
        defer { service.kill() }
        #expect(try await first.cli(["boot", "start"]).status == 0)
        #expect(try await first.cli(["boot", "wait"]).status == 0)
        #expect(Self.task(try await Self.report(first), "migrator.migrate").state == "done")
        let sameBoot = try await first.cli(["boot", "run", "migrator.migrate"])
        #expect(
            sameBoot.status == 1 && sameBoot.errors.contains("is a run-once task and already ran in boot #1"))
        first.process.kill(SIGTERM)
        _ = try await first.process.waitForExit()

        let second = try await BrokerProcess(
            control: first.control, bus: first.bus, ["--state-dir", state.path])
        defer { second.process.kill() }
        try await service.waitForLine(.stderr, seconds: 15) { $0.contains("registered again") }
        // The boot state is the earlier broker's: its last report, until this one boots (#2).
        let earlier = try await Self.report(second)
        #expect(
            earlier["boot"] == 1 && earlier["state"] == "done" && earlier["restored"] == true, "\(earlier)")
        #expect(Self.task(earlier, "migrator.migrate").state == "done")
        #expect(try await second.cli(["boot", "start"]).status == 0)
        #expect(try await second.cli(["boot", "wait"]).status == 0)
        let report = try await Self.report(second)
        #expect(report["boot"] == 2)
        #expect(Self.task(report, "migrator.migrate").reason == "run-once: already ran in an earlier boot")
        #expect(service.lines().filter { $0 == "TASK migrator.migrate" }.count == 1)
        let manual = try await second.cli(["boot", "run", "migrator.migrate"])
        #expect(
            manual.status == 1
                && manual.errors.contains("is a run-once task and already ran in an earlier boot"))
    }
}
