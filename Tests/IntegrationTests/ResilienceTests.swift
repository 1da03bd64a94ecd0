import Foundation
import Lifeline
import LifelineProtocol
import Testing

@Suite("Real processes: ownership, failures, restarts, bad input", .serialized, .timeLimit(.minutes(2)))
struct ResilienceTests {
    @Test("a duplicate name is refused while the first owner lives")
    func duplicateName() async throws {
        let broker = try await BrokerProcess()
        let first = try await broker.service("lifeline-probe", ["--name", "dup"])
        defer { first.kill(); broker.process.kill() }

        let second = try ChildProcess("lifeline-probe", ["--broker", broker.control, "--name", "dup"])
        #expect(try await second.waitForExit() == 1)
        await second.waitForOutputToEnd()
        #expect(
            second.lines(.stderr).contains {
                $0.contains("service 'dup' is already registered by pid \(first.pid)")
            })
        let lookup = try await broker.cli(["lookup", "dup", "--json"])
        #expect(try JSONParser.parse(lookup.output)["pid"]?.intValue == Int64(first.pid))
    }

    @Test("kill -9 of a service: gone from the registry after interval × liveness, serviceDidStop on the bus")
    func killedService() async throws {
        let broker = try await BrokerProcess()
        let victim = try await broker.service(
            "lifeline-probe", ["--name", "victim", "--heartbeat-interval", "200", "--liveness", "3"])
        let tail = try ChildProcess(
            "lifeline", ["tail", "serviceDidStop", "--json", "--broker", broker.control])
        defer { victim.kill(); tail.kill(); broker.process.kill() }
        try await tail.waitForLine(startingWith: "# tailing", .stderr)

        let killedAt = ContinuousClock.now
        victim.kill(SIGKILL)
        let line = try await tail.waitForLine(seconds: 10) { $0.contains("serviceDidStop") }
        let detected = ContinuousClock.now - killedAt
        let event = try JSONParser.parse(line)
        #expect(event["payload"] == ["name": "victim", "reason": "expired"])
        let services = try await broker.cli(["services", "--json"])
        #expect(!services.output.contains("victim"))
        print("kill -9 detected after \(detected) (interval 200 ms × liveness 3 = 600 ms)")
        #expect(detected >= .milliseconds(400))
    }

    @Test(
        "a broker stopped (SIGSTOP) for 2 s, past its services' 600 ms windows: resumed, it expires none that kept beating, keeps their sessions, and still expires one killed meanwhile"
    )
    func brokerPaused() async throws {
        // The services give the broker 4 s (200 ms × 20): they stay connected through its stop.
        let broker = try await BrokerProcess(["--heartbeat-interval", "200", "--liveness", "20"])
        let beats = ["--heartbeat-interval", "200", "--liveness", "3"]
        let host = try await broker.service("lifeline-probe", ["--name", "host", "--apps", "home"] + beats)
        let victim = try await broker.service("lifeline-probe", ["--name", "victim"] + beats)
        let tail = try ChildProcess(
            "lifeline", ["tail", "serviceDidStop", "--json", "--broker", broker.control])
        defer { host.kill(); victim.kill(); tail.kill(); broker.process.kill() }
        try await tail.waitForLine(startingWith: "# tailing", .stderr)
        #expect(try await broker.cli(["apps", "start", "home"]).status == 0)
        try await host.waitForLine { $0.hasPrefix("CALLBACK ") && $0.hasSuffix(" didCreate") }

        broker.process.kill(SIGSTOP)
        victim.kill(SIGKILL)
        // The scenario, not a readiness wait: the broker stays stopped past every window.
        try await Task.sleep(for: .seconds(2))
        broker.process.kill(SIGCONT)
        let excused = try await broker.process.waitForLine(.stderr, seconds: 10) {
            $0.contains("this broker did not run for")
        }
        #expect(excused.contains("not counted as its services' silence"))
        let line = try await tail.waitForLine(seconds: 10) { $0.contains("serviceDidStop") }
        #expect(try JSONParser.parse(line)["payload"] == ["name": "victim", "reason": "expired"])
        let services = try await broker.cli(["services", "--json"])
        #expect(services.output.contains("\"host\"") && !services.output.contains("\"victim\""))
        let apps = try await broker.cli(["apps", "list", "--json"])
        #expect(try JSONParser.parse(apps.output)["stack"]?.arrayValue?.map { $0["app"] } == ["home"])
        #expect(!tail.lines().contains { $0.contains("\"host\"") }, "the host never left")
        #expect(!host.lines().contains { $0.contains("didDestroy") })
        #expect(!host.lines(.stderr).contains { $0.contains("reconnecting") }, "the host kept its connection")
    }

    @Test("the broker restarted on the same endpoints: services register again without being restarted")
    func brokerRestart() async throws {
        let first = try await BrokerProcess()
        let alpha = try await first.service(
            "lifeline-probe", ["--name", "alpha", "--events", "didBecomeActive"])
        let beta = try await first.service("lifeline-probe", ["--name", "beta"])
        defer { alpha.kill(); beta.kill() }

        first.process.kill(SIGKILL)
        _ = try await first.process.waitForExit()
        let second = try await BrokerProcess(control: first.control, bus: first.bus)
        defer { second.process.kill() }
        try await alpha.waitForLine(.stderr, seconds: 15) { $0.contains("registered again") }
        try await beta.waitForLine(.stderr, seconds: 15) { $0.contains("registered again") }

        let listing = try await second.cli(["services", "--json"])
        let pids = try JSONParser.parse(listing.output)["services"]?.arrayValue?.compactMap {
            $0["pid"]?.intValue
        }
        #expect(Set(pids ?? []) == [Int64(alpha.pid), Int64(beta.pid)])
        let receipt = try await second.cli(["publish", "didBecomeActive", "--force", "--json"])
        #expect(try JSONParser.parse(receipt.output)["subscribers"] == 1)
        try await alpha.waitForLine { $0.contains("didBecomeActive") }
    }

    @Test("SIGTERM: a service unregisters and exits 0; the broker tells services it leaves and exits 0")
    func gracefulShutdown() async throws {
        let broker = try await BrokerProcess()
        let leaver = try await broker.service("lifeline-probe", ["--name", "leaver"])
        let stayer = try await broker.service("lifeline-probe", ["--name", "stayer"])
        let tail = try ChildProcess(
            "lifeline", ["tail", "serviceDidStop", "--json", "--broker", broker.control])
        defer { leaver.kill(); stayer.kill(); tail.kill(); broker.process.kill() }
        try await tail.waitForLine(startingWith: "# tailing", .stderr)

        leaver.kill(SIGTERM)
        #expect(try await leaver.waitForExit() == 0)
        let line = try await tail.waitForLine { $0.contains("serviceDidStop") }
        #expect(try JSONParser.parse(line)["payload"] == ["name": "leaver", "reason": "unregistered"])

        broker.process.kill(SIGTERM)
        #expect(try await broker.process.waitForExit() == 0)
        try await stayer.waitForLine(.stderr) {
            $0.contains("the broker disconnected us (broker shutting down)")
        }
    }

    @Test(
        "SIGTERM with calls running past their callers' deadlines (one awaiting, one computing): the service stops waiting for them a second after, cancels them and exits 0"
    )
    func stopDoesNotWaitForAbandonedCalls() async throws {
        let broker = try await BrokerProcess()
        let service = try await broker.service("lifeline-probe", ["--name", "slow"])
        defer { service.kill(); broker.process.kill() }
        for method in ["sleep", "spin"] {
            let call = try await broker.cli(["call", "slow", method, "ms:=600000", "--timeout", "500ms"])
            #expect(call.status == 1 && call.errors.contains("504"), "\(call.errors)")
        }
        let stopped = ContinuousClock.now
        service.kill(SIGTERM)
        #expect(try await service.waitForExit(seconds: 30) == 0)
        print(
            "a service stopped with 2 abandoned calls exited \(BrokerGroupTests.seconds(since: stopped)) s after SIGTERM"
        )
        #expect(
            service.lines(.stderr).contains {
                $0.contains(
                    "stopped waiting for 2 request(s) still running past the deadlines their senders wait for"
                )
            })
    }

    @Test(
        "SIGTERM while a boot task hangs: the service waits for it only until the task's deadline and a second more, cancels it and exits 0"
    )
    func stopDoesNotWaitForAHungBootTask() async throws {
        let broker = try await BrokerProcess()
        let service = try await broker.service(
            "lifeline-probe",
            ["--name", "hung", "--tasks", #"[{"name": "wait", "ms": 600000, "deadlineMs": 1500}]"#])
        let run = try ChildProcess("lifeline", ["boot", "run", "hung.wait", "--broker", broker.control])
        defer { service.kill(); run.kill(); broker.process.kill() }
        try await service.waitForLine { $0.hasPrefix("TASK ") }
        let stopped = ContinuousClock.now
        service.kill(SIGTERM)
        #expect(try await service.waitForExit(seconds: 30) == 0)
        print(
            "a service stopped with a hung boot task exited \(BrokerGroupTests.seconds(since: stopped)) s after SIGTERM"
        )
        #expect(
            service.lines(.stderr).contains {
                $0.contains(
                    "stopped waiting for 1 request(s) still running past the deadlines their senders wait for"
                )
            })
    }

    @Test(
        "a handler that throws is counted: its acknowledgement carries the error, and STATS, 'lifeline stats' and the heartbeats say 'failed'"
    )
    func failedHandlersAreCounted() async throws {
        let broker = try await BrokerProcess()
        let failing = try await broker.service(
            "lifeline-probe", ["--name", "failing", "--events", "com.example.x", "--fail"])
        defer { failing.kill(); broker.process.kill() }
        let published = try await broker.cli(["publish", "com.example.x", "n=1", "--ack"])
        #expect(published.status == 1 && published.errors.contains("failing handled it with an error"))
        var failed: Int64?
        var handled: Int64?
        // A bound for a loaded machine, not a window: the counts come with the next heartbeat.
        let deadline = ContinuousClock.now + .seconds(30)
        while failed != 1 && ContinuousClock.now < deadline {
            let stats = try await broker.cli(["stats", "failing", "--json"])
            let record = try JSONParser.parse(stats.output)["services"]?["failing"] ?? .null
            failed = record["failed"]?.intValue
            handled = record["handled"]?["com.example.x"]?.intValue
            // Polling with a deadline: the counts come with heartbeats.
            if failed != 1 { try await Task.sleep(for: .milliseconds(100)) }
        }
        #expect(failed == 1 && handled == 1, "failed \(failed ?? -1), handled \(handled ?? -1)")
        let table = try await broker.cli(["stats", "failing"])
        #expect(table.stdout.contains { $0.contains("FAILED") })
    }

    @Test("garbage on the control socket gets error replies, and the broker answers a lookup right after")
    func garbage() async throws {
        let broker = try await BrokerProcess()
        let probe = try await broker.service("lifeline-probe", ["--name", "survivor"])
        defer { probe.kill(); broker.process.kill() }

        let replies = try RawPeer.exchange(with: broker.control, messages: RawPeer.garbage)
        for (index, reply) in replies.enumerated() {
            #expect(
                reply.count == 5 && reply[0] == Array("LLC01".utf8), "garbage #\(index) answered \(reply)")
            #expect(reply.count == 5 && reply[3].first != UInt8(ascii: "2"), "garbage #\(index) was accepted")
        }
        #expect(try await broker.cli(["lookup", "survivor"]).status == 0)
        #expect(broker.process.process.isRunning)
        try await broker.process.waitForLine(.stderr) { $0.contains("refused a message") }
    }

    @Test("a peer cannot forge log lines: control characters in what it sends are escaped")
    func logInjection() async throws {
        let broker = try await BrokerProcess()
        defer { broker.process.kill() }
        let forgedID = Array("x\n2026-12-01T00:00:00.000Z broker: FORGED".utf8)
        let hello = try RawPeer.send(
            [[Array("LLC01".utf8), Array("REPLY".utf8), forgedID, Array("200".utf8), Array("{}".utf8)]],
            thenAsk: [Array("LLC01".utf8), Array("HELLO".utf8), Array("h".utf8), []], to: broker.control)
        #expect(hello.count == 5 && hello[3] == Array("200".utf8))
        let line = try await broker.process.waitForLine(.stderr) {
            $0.contains("came after its request ended, or for none; nothing waits for it")
        }
        #expect(line.contains("'x\\n2026-12-01T00:00:00.000Z broker: FORGED'"))
        #expect(!broker.process.lines(.stderr).contains { $0.hasPrefix("2026-12-01T00:00:00.000Z") })
    }

    @Test("the CLI refuses bad usage with exit status 2 and one clear sentence")
    func usageErrors() async throws {
        let unknownEvent = try await CLIResult.run(["publish", "didEnterBackgroun"])
        #expect(unknownEvent.status == 2)
        #expect(
            unknownEvent.errors.contains(
                "unknown event 'didEnterBackgroun'; did you mean 'didEnterBackground'? (a custom event needs a namespace"
            ))
        let badFlag = try await CLIResult.run(["services", "--frobnicate"])
        #expect(
            badFlag.status == 2
                && badFlag.errors.hasPrefix("lifeline services: unknown option '--frobnicate'"))
        let noEventButAnUnknownOption = try await CLIResult.run(["publish", "--bogus"])
        #expect(
            noEventButAnUnknownOption.status == 2
                && noEventButAnUnknownOption.errors.hasPrefix("lifeline publish: unknown option '--bogus'"),
            "\(noEventButAnUnknownOption.errors)")
        let unknownCommand = try await CLIResult.run(["frob"])
        #expect(unknownCommand.status == 2)
        let unreachable = try await CLIResult.run([
            "status", "--broker", "tcp://127.0.0.1:1", "--timeout", "200",
        ])
        #expect(
            unreachable.status == 1
                && unreachable.errors.contains(
                    "no broker answered at tcp://127.0.0.1:1: the connection is refused; start one with `lifeline up`"
                ))
        let slow = try await CLIResult.run(["status", "--broker", "tcp://127.0.0.1:1"])
        #expect(slow.errors.contains("no broker answered"), "about a second, not the 5 s timeout")
        let malformed = try await CLIResult.run(["services", "--broker", "localhost:7200"])
        #expect(
            malformed.status == 2
                && malformed.errors.contains(
                    "--broker: expected tcp://HOST:PORT or ipc://PATH, not 'localhost:7200'")
        )
        let durations = try await CLIResult.run([
            "status", "--broker", "tcp://127.0.0.1:1", "--timeout", "300ms",
        ])
        #expect(durations.status == 1, "--timeout takes 300ms, 5s, 1m")
        let badDuration = try await CLIResult.run(["status", "--timeout", "soon"])
        #expect(
            badDuration.status == 2
                && badDuration.errors.contains("--timeout must be a duration such as 500ms"))
        let typo = try await CLIResult.run(["servics"])
        #expect(
            typo.status == 2 && typo.errors.contains("unknown command 'servics'; did you mean 'services'?"))
        let help = try await CLIResult.run(["publish", "--help"])
        #expect(help.status == 0 && help.output.hasPrefix("usage: lifeline publish EVENT"))
    }
}
