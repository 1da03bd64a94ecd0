import Foundation
import Lifeline
import LifelineProtocol
import Testing

@Suite(
    "Two hosts (network namespaces joined by veth) over CURVE/TCP", .serialized, .timeLimit(.minutes(3)),
    .enabled(if: NetworkHosts.available, "needs root and iproute2 for network namespaces"))
struct MultiHostTests {
    @Test(
        "register, publish, dispatch, call, micro-apps and boot across hosts; a cut link longer than the heartbeat window loses nothing"
    )
    func acrossHosts() async throws {
        let hosts = try NetworkHosts()
        defer { hosts.remove() }
        let keys = try SecuritySetup(keys: ["ops", "gw", "shell", "counter"])
        defer { keys.remove() }
        try keys.writePolicy([
            "ops": SecurityTests.admin,
            "gw": ["register": ["gateway", "account"], "subscribe": ["*"], "call": ["*"]],
            "shell": ["register": ["shell"], "subscribe": ["*"], "call": ["gateway.*"]],
            "counter": ["register": ["counter"], "subscribe": ["test.*"]],
        ])
        let scratch = FileManager.default.temporaryDirectory.appendingPathComponent(
            "lifeline-hosts-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: scratch, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: scratch) }
        let journal = scratch.appendingPathComponent("counter.journal").path

        let control = "tcp://\(hosts.addresses.0):7200"
        let broker = try hosts.process(
            onFirst: true, "lifeline",
            [
                "broker", "--control", control, "--bus", "tcp://\(hosts.addresses.0):7201", "--state-dir",
                scratch.appendingPathComponent("state").path, "--launcher", "launcher",
            ] + keys.brokerArguments)
        defer { broker.kill() }
        try await broker.waitForLine(startingWith: "READY ")
        func service(_ executable: String, key: String, _ extra: [String] = []) async throws -> ChildProcess {
            let child = try hosts.process(
                onFirst: false, executable,
                ["--broker", control, "--heartbeat-interval", "200", "--liveness", "3"]
                    + keys.keyArguments(key) + extra)
            try await child.waitForLine(startingWith: "READY service=")
            return child
        }
        let gateway = try await service("lifeline-gateway", key: "gw")
        let shell = try await service("lifeline-shell", key: "shell")
        let probe = try await service(
            "lifeline-probe", key: "counter",
            ["--name", "counter", "--events", "test.tick", "--journal", journal])
        defer { for child in [gateway, shell, probe] { child.kill() } }
        /// The CLI on host B (a client across the network) or A (beside the broker).
        func cli(_ arguments: [String], onFirst: Bool = false) async throws -> CLIResult {
            let child = try hosts.process(
                onFirst: onFirst, "lifeline", arguments + ["--broker", control] + keys.keyArguments("ops"))
            let status = try await child.waitForExit(seconds: 20)
            await child.waitForOutputToEnd()
            return CLIResult(status: status, stdout: child.lines(.stdout), stderr: child.lines(.stderr))
        }

        let services = try await cli(["services", "--json"])
        #expect(services.status == 0)
        let names = try JSONParser.parse(services.output)["services"]?.arrayValue?.compactMap {
            $0["name"]?.stringValue
        }
        #expect(Set(names ?? []) == ["gateway", "shell", "counter"])
        let launched = try await cli(["dispatch", "didFinishLaunching"])
        #expect(launched.status == 0, "an ordered dispatch across hosts, which boots: \(launched.errors)")
        try await shell.waitForLine { $0 == "CALLBACK s2 login didFinishLaunching" }
        #expect(
            try await cli(["apps", "action", "login", "signIn", #"{"user":"ana","password":"secret"}"#])
                .status == 0)
        try await shell.waitForLine { $0 == "CALLBACK s3 home didFinishLaunching" }
        #expect(try await cli(["call", "gateway", "state"]).output.contains(#""signedIn":true"#))
        let report = try await cli(["boot", "report", "--json"])
        #expect(try JSONParser.parse(report.output)["state"] == "done", "the boot ran across hosts")

        var published = 0
        func publish(_ count: Int, onFirst: Bool) async throws {
            for _ in 0..<count {
                published += 1
                let result = try await cli(
                    ["publish", "test.tick", #"{"n":\#(published)}"#], onFirst: onFirst)
                #expect(result.status == 0, "publish #\(published): \(result.errors)")
            }
        }
        try await publish(10, onFirst: false)
        try await probe.waitForLine { $0.contains(#""n":10"#) }

        try hosts.setLink(up: false)
        try await broker.waitForLine(.stderr, seconds: 15) {
            $0.contains("service counter") && $0.contains("expired")
        }
        try await publish(15, onFirst: true)
        try hosts.setLink(up: true)
        try await probe.waitForLine(seconds: 30) { $0.contains(#""n":25"#) }
        try await publish(5, onFirst: false)
        try await probe.waitForLine(seconds: 30) { $0.contains(#""n":30"#) }

        let handled = try String(contentsOfFile: journal, encoding: .utf8).split(separator: "\n").map {
            line in
            try JSONParser.parse(String(line.split(separator: " ", maxSplits: 2)[2]))["n"]?.intValue ?? -1
        }
        #expect(
            handled == (1...30).map { Int64($0) },
            "every event once, in order, the cut's replayed from the journal")
        var back: Set<String> = []
        let deadline = ContinuousClock.now + .seconds(20)
        while !back.isSuperset(of: ["gateway", "shell", "counter"]), ContinuousClock.now < deadline {
            let list = try await cli(["services", "--json"])
            back = Set(
                (try? JSONParser.parse(list.output))?["services"]?.arrayValue?.compactMap {
                    $0["name"]?.stringValue
                }
                    ?? [])
            try await Task.sleep(for: .milliseconds(100))  // polling with a deadline
        }
        #expect(
            back.isSuperset(of: ["gateway", "shell", "counter"]),
            "every service registered again after the cut")
    }
}
