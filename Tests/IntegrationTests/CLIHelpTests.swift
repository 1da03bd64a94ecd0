import Foundation
import Lifeline
import LifelineProtocol
import Testing

@Suite("The CLI that helps: real binaries, exit codes and messages", .serialized, .timeLimit(.minutes(1)))
struct CLIHelpTests {
    @Test("publish says which lifecycle transition it caused; services fits 100 columns unless --wide")
    func publishAndServices() async throws {
        let broker = try await BrokerProcess()
        defer { broker.process.kill() }
        let many = (1...12).map { "com.example.event\($0)" }.joined(separator: ",")
        let probe = try await broker.service("lifeline-probe", ["--name", "wide", "--events", many])
        defer { probe.kill() }
        let launched = try await broker.cli(["publish", "didFinishLaunching"])
        #expect(launched.stdout.contains("lifecycle: notRunning → launching"))
        let custom = try await broker.cli(["publish", "com.example.event1"])
        #expect(!custom.output.contains("lifecycle"), "a custom event moves no state")
        let table = try await broker.cli(["services"])
        #expect(table.stdout.allSatisfy { $0.count <= 100 }, "\(table.stdout.map(\.count))")
        #expect(table.output.contains("…+"))
        let wide = try await broker.cli(["services", "--wide"])
        #expect(wide.output.contains("com.example.event12"))
    }

    @Test("clear errors instead of raw dumps: an unwritable SVG path, a topology naming a missing executable")
    func clearErrors() async throws {
        let broker = try await BrokerProcess()
        defer { broker.process.kill() }
        let svg = try await broker.cli(["boot", "report", "--svg", "/nonexistent/x.svg"])
        #expect(svg.status == 1)
        #expect(
            svg.errors
                == "lifeline boot: cannot write the timeline to /nonexistent/x.svg: the directory /nonexistent does not exist"
        )
        #expect(!svg.errors.contains("NSCocoaErrorDomain"))
        let file = FileManager.default.temporaryDirectory.appendingPathComponent(
            "topology-\(UUID().uuidString).json")
        defer { try? FileManager.default.removeItem(at: file) }
        try Data(#"{"services": [{"name": "ghost", "executable": "lifeline-ghost"}]}"#.utf8).write(to: file)
        let check = try await CLIResult.run(["topology", file.path])
        #expect(check.status == 1 && check.errors.contains("services[0] ('ghost'): no executable at"))
    }

    @Test("logs have levels and a JSON form: --log-level warning keeps warnings only; every JSON line parses")
    func logLevels() async throws {
        let quiet = try await BrokerProcess(["--log-level", "warning"])
        defer { quiet.process.kill() }
        let hostile = try await CLIResult.run(["lookup", "nobody", "--broker", quiet.control])
        #expect(hostile.status == 1)
        _ = try RawPeer.exchange(with: quiet.control, messages: [RawPeer.garbage[3]])
        let warning = try await quiet.process.waitForLine(.stderr) { $0.contains(" warning ") }
        #expect(warning.contains("lifeline[") && warning.contains("] broker: "))
        #expect(!quiet.process.lines(.stderr).contains { $0.contains(" info ") }, "no info line at warning")

        let structured = try await BrokerProcess(["--log-format", "json"])
        defer { structured.process.kill() }
        let line = try await structured.process.waitForLine(.stderr) { $0.contains("serving control") }
        let entry = try JSONParser.parse(line)
        #expect(entry["level"] == "info" && entry["service"] == "broker" && entry["pid"]?.intValue != nil)
        #expect(entry["ts"]?.stringValue?.hasSuffix("Z") == true)
    }

    @Test(
        "describe shows a service's methods with their shapes and its events; events lists registered custom events"
    )
    func introspection() async throws {
        let broker = try await BrokerProcess()
        defer { broker.process.kill() }
        let url = try await broker.service("lifeline-url")
        let analytics = try await broker.service("lifeline-analytics")
        defer { for child in [url, analytics] { child.kill() } }
        let described = try await broker.cli(["describe", "url"])
        #expect(described.status == 0)
        #expect(
            described.stdout.contains(
                #"  resolve — the route an app URL opens (takes {"url": string}, answers {"url": string, "route": string})"#
            ))
        #expect(described.stdout.contains("  openURL (handles)"))
        let typo = try await broker.cli(["describe", "analytic"])
        #expect(
            typo.status == 1 && typo.errors.contains("no service named 'analytic'; did you mean 'analytics'?")
        )
        let events = try await broker.cli(["events", "--broker", broker.control])
        #expect(events.stdout.contains { $0.hasPrefix("analytics.track") && $0.contains("name:string") })
    }

    @Test("tail takes patterns: only matching events are printed")
    func tailPatterns() async throws {
        let broker = try await BrokerProcess()
        defer { broker.process.kill() }
        let tail = try ChildProcess(
            "lifeline", ["tail", "com.example.*", "--count", "2"],
            environment: ["LIFELINE_BROKER": broker.control])
        defer { tail.kill() }
        try await tail.waitForLine(.stderr) { $0.hasPrefix("# tailing com.example.*") }
        for event in ["com.other.noise", "com.example.first", "com.other.more", "com.example.second"] {
            #expect(try await broker.cli(["publish", event]).status == 0)
        }
        #expect(try await tail.waitForExit(seconds: 10) == 0)
        await tail.waitForOutputToEnd()
        #expect(
            tail.lines().map { $0.split(separator: " ")[2] } == ["com.example.first", "com.example.second"])
    }

    @Test("tail --all also shows dispatch steps and calls; a plain tail does not")
    func tailAll() async throws {
        let broker = try await BrokerProcess()
        defer { broker.process.kill() }
        let url = try await broker.service("lifeline-url")
        defer { url.kill() }
        let plain = try ChildProcess("lifeline", ["tail"], environment: ["LIFELINE_BROKER": broker.control])
        let all = try ChildProcess(
            "lifeline", ["tail", "--all", "--count", "2"], environment: ["LIFELINE_BROKER": broker.control])
        defer { for child in [plain, all] { child.kill() } }
        try await plain.waitForLine(.stderr) { $0.hasPrefix("# tailing") }
        try await all.waitForLine(.stderr) { $0.hasPrefix("# tailing") }
        #expect(try await broker.cli(["call", "url", "resolve", #"{"url":"app://topup"}"#]).status == 0)
        #expect(try await broker.cli(["dispatch", "didFinishLaunching"]).status == 0)
        #expect(try await all.waitForExit(seconds: 10) == 0)
        await all.waitForOutputToEnd()
        let names = all.lines().map { String($0.split(separator: " ")[2]) }
        #expect(names.first == "callDidFinish", "\(all.lines())")
        #expect(all.lines().first?.contains(#""service":"url""#) == true)
        try await plain.waitForLine { $0.contains("didFinishLaunching") }
        #expect(!plain.lines().contains { $0.contains("callDidFinish") || $0.contains("dispatchDidStep") })
    }

    @Test("an action an app does not answer is refused naming the session and the actions it does answer")
    func unknownAction() async throws {
        let broker = try await BrokerProcess(["--launcher", "launcher"])
        defer { broker.process.kill() }
        let gateway = try await broker.service("lifeline-gateway")
        let shell = try await broker.service("lifeline-shell")
        defer { for child in [gateway, shell] { child.kill() } }
        #expect(try await broker.cli(["boot", "start"]).status == 0)
        try await shell.waitForLine { $0 == "CALLBACK s2 login didFinishLaunching" }
        let refused = try await broker.cli(["apps", "action", "login", "dance"])
        #expect(refused.status == 1)
        #expect(
            refused.errors.contains("the app 'login' (session s2) has no action 'dance'; it answers: signIn"))
    }

    @Test("completion scripts for bash and zsh complete commands and events")
    func completion() async throws {
        let bash = try await CLIResult.run(["completion", "bash"])
        #expect(bash.status == 0 && bash.output.contains("complete -F _lifeline lifeline"))
        let script = FileManager.default.temporaryDirectory.appendingPathComponent(
            "lifeline-\(UUID().uuidString).bash")
        defer { try? FileManager.default.removeItem(at: script) }
        try bash.output.write(to: script, atomically: true, encoding: .utf8)
        let shell = Process()
        shell.executableURL = URL(fileURLWithPath: "/bin/bash")
        shell.arguments = [
            "-c",
            "source \(script.path); COMP_WORDS=(lifeline publish didBec); COMP_CWORD=2; _lifeline; echo \"${COMPREPLY[@]}\"",
        ]
        let out = Pipe()
        shell.standardOutput = out
        try shell.run()
        shell.waitUntilExit()
        let completed = String(decoding: out.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        #expect(completed.trimmingCharacters(in: .whitespacesAndNewlines) == "didBecomeActive")
        let zsh = try await CLIResult.run(["completion", "zsh"])
        #expect(zsh.status == 0 && zsh.output.hasPrefix("#compdef lifeline"))
        let fish = try await CLIResult.run(["completion", "fish"])
        #expect(fish.status == 2 && fish.errors.contains("unknown shell 'fish'; shells: bash, zsh"))
    }
}
