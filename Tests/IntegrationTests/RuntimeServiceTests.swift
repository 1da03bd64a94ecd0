import Foundation
import Lifeline
import LifelineProtocol
import Testing

@Suite(
    "Real processes: services registered and unregistered at run time", .serialized,
    .timeLimit(.minutes(2)))
struct RuntimeServiceTests {
    @Test("a running service registers another name: found, called, owned, started, unregistered")
    func registerAndUnregister() async throws {
        let broker = try await BrokerProcess()
        let owner = try await broker.service("lifeline-probe", ["--name", "owner"])
        let rival = try await broker.service("lifeline-probe", ["--name", "rival"])
        let tail = try ChildProcess(
            "lifeline", ["tail", "serviceDidStart", "serviceDidStop", "--json", "--broker", broker.control])
        defer { for child in [owner, rival, tail, broker.process] { child.kill() } }
        try await tail.waitForLine(startingWith: "# tailing", .stderr)
        #expect(try await broker.cli(["dispatch", "didFinishLaunching"]).status == 0)

        let registered = try await broker.cli(["call", "owner", "register", #"{"name":"extra"}"#])
        #expect(registered.status == 0 && registered.output == #"{"registered":"extra"}"#)
        try await owner.waitForLine { $0 == "STARTED extra" }
        let started = try await tail.waitForLine { $0.contains(#""extra""#) }
        #expect(try JSONParser.parse(started)["event"] == "serviceDidStart")

        let record = try JSONParser.parse(try await broker.cli(["lookup", "extra", "--json"]).output)
        #expect(record["pid"]?.intValue == Int64(owner.pid))
        #expect(record["methods"] == ["echo", "whoami"])
        let whoami = try await broker.cli(["call", "extra", "whoami"])
        #expect(try JSONParser.parse(whoami.output) == ["name": "extra", "pid": .int(Int64(owner.pid))])
        let missing = try await broker.cli(["call", "extra", "register", #"{"name":"x"}"#])
        #expect(missing.status == 1 && missing.errors.contains("404"))

        let taken = try await broker.cli(["call", "rival", "register", #"{"name":"extra"}"#])
        #expect(taken.status == 1 && taken.errors.contains("409"))
        #expect(taken.errors.contains("already registered by pid \(owner.pid)"))
        let main = try await broker.cli(["call", "owner", "register", #"{"name":"owner"}"#])
        #expect(main.status == 1 && main.errors.contains("main service"))
        let foreign = try await broker.cli(["call", "rival", "unregister", #"{"name":"extra"}"#])
        #expect(foreign.status == 1 && foreign.errors.contains("registered no service named 'extra'"))

        #expect(try await broker.cli(["call", "owner", "unregister", #"{"name":"extra"}"#]).status == 0)
        try await owner.waitForLine { $0 == "DESTROYED extra" }
        let stopped = try await tail.waitForLine { $0.contains("serviceDidStop") && $0.contains("extra") }
        #expect(try JSONParser.parse(stopped)["payload"] == ["name": "extra", "reason": "unregistered"])
        #expect(try await broker.cli(["lookup", "extra"]).status == 1)
        #expect(
            try await broker.cli(["call", "rival", "register", #"{"name":"extra"}"#]).status == 0,
            "the name is free again")
    }

    @Test("a lazy runtime service starts on its first call; runtime names survive a broker restart")
    func lazyAndRestart() async throws {
        let first = try await BrokerProcess()
        let owner = try await first.service("lifeline-probe", ["--name", "owner"])
        defer { owner.kill() }
        #expect(try await first.cli(["dispatch", "didFinishLaunching"]).status == 0)
        #expect(
            try await first.cli(["call", "owner", "register", #"{"name":"sleepy","lazy":true}"#]).status == 0)
        #expect(!owner.lines().contains("STARTED sleepy"))
        #expect(try await first.cli(["call", "sleepy", "echo", #"{"n":1}"#]).output == #"{"n":1}"#)
        try await owner.waitForLine { $0 == "STARTED sleepy" }

        first.process.kill(SIGKILL)
        _ = try await first.process.waitForExit()
        let second = try await BrokerProcess(control: first.control, bus: first.bus)
        defer { second.process.kill() }
        try await owner.waitForLine(.stderr, seconds: 15) { $0.contains("registered again") }
        var record = try await second.cli(["lookup", "sleepy", "--json"])
        for _ in 0..<100 where record.status != 0 {
            try await Task.sleep(for: .milliseconds(50))  // poll: re-registration follows the main one
            record = try await second.cli(["lookup", "sleepy", "--json"])
        }
        #expect(try JSONParser.parse(record.output)["pid"]?.intValue == Int64(owner.pid))
        #expect(try await second.cli(["call", "sleepy", "echo", #"{"n":2}"#]).output == #"{"n":2}"#)
    }

    @Test("a process that dies takes its runtime names with it")
    func diesWithItsProcess() async throws {
        let broker = try await BrokerProcess()
        let owner = try await broker.service(
            "lifeline-probe", ["--name", "owner", "--heartbeat-interval", "200", "--liveness", "2"])
        defer { owner.kill(); broker.process.kill() }
        #expect(try await broker.cli(["call", "owner", "register", #"{"name":"extra"}"#]).status == 0)
        owner.kill(SIGKILL)
        try await broker.process.waitForLine(.stderr) {
            $0.contains("service extra") && $0.contains("expired")
        }
        #expect(try await broker.cli(["lookup", "extra"]).status == 1)
    }
}
