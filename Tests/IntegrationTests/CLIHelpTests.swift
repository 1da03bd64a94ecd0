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

    @Test(
        "the broker refuses endpoints it cannot bind as given (a port past 65535 wrapped), and one bound as control and bus both, exit 2 naming them"
    )
    func brokerEndpoints() async throws {
        for (control, bus, words) in [
            (
                "tcp://127.0.0.1:70000", "tcp://127.0.0.1:*",
                "'tcp://127.0.0.1:70000' is not a tcp://HOST:PORT"
            ),
            ("tcp://127.0.0.1:", "tcp://127.0.0.1:*", "'tcp://127.0.0.1:' is not a tcp://HOST:PORT"),
            ("ipc://", "tcp://127.0.0.1:*", "'ipc://' is not a tcp://HOST:PORT"),
            (
                "ipc:///tmp/lifeline-same", "ipc:///tmp/lifeline-same",
                "--control and --bus both bind ipc:///tmp/lifeline-same"
            ),
        ] {
            let refused = try await CLIResult.run(["broker", "--control", control, "--bus", bus])
            #expect(refused.status == 2 && refused.errors.contains(words), "\(refused.errors)")
        }
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
        let listed = try JSONParser.parse(try await broker.cli(["events", "--json"]).output).arrayValue ?? []
        func entry(_ name: String) -> JSONValue? { listed.first { $0["name"]?.stringValue == name } }
        #expect(entry("analytics.track")?["origin"] == "custom", "the --json list has the custom events too")
        #expect(entry("analytics.track")?["services"] == ["analytics"])
        #expect(entry("willResignActive")?["acknowledged"] == true, "with the per-event rules")
        #expect(entry("openURL")?["defaultReturn"] == false)
        #expect(entry("performFetch")?["completion"] == "fetchResult")
        let unreachable = try await CLIResult.run(["events", "--json", "--broker", "tcp://127.0.0.1:1"])
        #expect(unreachable.status == 1 && unreachable.errors.contains("the custom events are not listed"))
        #expect(
            (try JSONParser.parse(unreachable.output).arrayValue?.count ?? 0) > 30, "the built-ins still are")
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
        try ChildProcess.spawning.withLock { _ in try shell.run() }
        shell.waitUntilExit()
        let completed = String(decoding: out.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        #expect(completed.trimmingCharacters(in: .whitespacesAndNewlines) == "didBecomeActive")
        let zsh = try await CLIResult.run(["completion", "zsh"])
        #expect(zsh.status == 0 && zsh.output.hasPrefix("#compdef lifeline"))
        let fish = try await CLIResult.run(["completion", "fish"])
        #expect(fish.status == 2 && fish.errors.contains("unknown shell 'fish'; shells: bash, zsh"))
    }
}

@Suite(
    "Every option the CLI declares is read, and its help is made from the declaration",
    .timeLimit(.minutes(2)))
struct CLIOptionsTests {
    /// The long options a command's `--help` lists.
    static func listedOptions(_ help: [String]) -> Set<String> {
        guard let start = help.firstIndex(of: "options:") else { return [] }
        return Set(
            help[(start + 1)...].filter { $0.hasPrefix("  -") }.flatMap {
                $0.split(separator: " ").map { String($0.trimmingCharacters(in: [","])) }
                    .filter { $0.hasPrefix("--") }
            })
    }

    @Test(
        "each command, given every option its --help lists, gets past parsing (no 'unknown option', no 'does not apply'); help fits 100 columns"
    )
    func everyDeclaredOptionIsRead() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "cli-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let topology = directory.appendingPathComponent("topology.json").path
        try Data(#"{"services": []}"#.utf8).write(to: URL(fileURLWithPath: topology))
        let dead = ["--broker", "tcp://127.0.0.1:1", "--timeout", "50ms"]
        // Each run must fail after parsing (no broker there, no such file), never at it.
        let runs: [[String]] = [
            ["publish", "com.example.x", "--ack", "--force", "--json"] + dead,
            ["publish", "com.example.x", "--no-ack"] + dead,
            ["dispatch", "didFinishLaunching", "--step-timeout", "100", "--force", "--json"] + dead,
            ["tail", "--count", "1", "--all", "--json"] + dead,
            ["services", "--wide", "--instances", "--json"] + dead,
            ["lookup", "x", "--json"] + dead,
            ["describe", "x", "--json"] + dead,
            ["call", "x", "m", "--pretty", "--json"] + dead,
            ["apps", "start", "x", "--mode", "pushNoAnimation", "--clear-top", "--parent", "s1", "--json"]
                + dead,
            ["apps", "find", "x", "--all"] + dead,
            ["apps", "exit", "s1", "--force", "--result", "{}"] + dead,
            ["boot", "report", "--svg", directory.appendingPathComponent("boot.svg").path, "--json"] + dead,
            ["status", "--json"] + dead,
            ["stats", "--json"] + dead,
            ["actors", "cart", "--json"] + dead,
            ["events", "--json", "--broker", "tcp://127.0.0.1:1"],
            ["topology", topology, "--shell"],
            ["topology", topology, "--json"],
            [
                "up", "--topology", directory.appendingPathComponent("none.json").path, "--run-dir",
                directory.path, "--detach", "--log-level", "info", "--log-format", "text",
            ],
            ["down", "--run-dir", directory.path],
            ["scale", "rates", "2", "--run-dir", directory.path],
            ["keys", "new", "k", "--dir", directory.path],
            ["policy", "check", directory.appendingPathComponent("none.json").path, "--key", "x"],
            ["completion", "bash"],
            // Fails reading the token file, after every option was taken.
            [
                "console", "--listen", "127.0.0.1:0", "--token-file", "/nonexistent/token", "--broker",
                "tcp://127.0.0.1:1",
            ],
        ]
        var covered: [String: Set<String>] = [:]
        for run in runs {
            let result = try await CLIResult.run(run)
            #expect(
                !result.errors.contains("unknown option") && !result.errors.contains("does not apply")
                    && !result.errors.contains("needs a value"), "\(run): \(result.errors)")
            if [
                "publish", "dispatch", "tail", "services", "lookup", "describe", "call", "apps", "boot",
                "status", "actors",
            ]
            .contains(run[0]) {
                #expect(
                    result.status == 1, "\(run) fails at the dead broker, after parsing: \(result.errors)")
            }
            covered[run[0], default: []].formUnion(run.filter { $0.hasPrefix("--") })
        }
        // --key and --broker-key are read (a missing file is named), for every broker client.
        let keys = try await CLIResult.run([
            "status", "--key", "/nonexistent.key", "--broker-key", "/nonexistent.pub",
        ])
        #expect(keys.status == 2 && keys.errors.contains("/nonexistent"), "\(keys.errors)")
        for client in [
            "publish", "dispatch", "tail", "services", "lookup", "describe", "call", "apps", "boot", "status",
            "stats", "console", "actors",
        ] {
            covered[client, default: []].formUnion(["--key", "--broker-key", "--help"])
        }
        let overview = try await CLIResult.run(["--help"])
        let commands = overview.stdout.drop { $0 != "commands:" }.dropFirst().prefix { !$0.isEmpty }
            .compactMap { $0.split(separator: " ").first.map(String.init) }
        #expect(commands.count >= 19, "\(overview.stdout)")
        for command in commands {
            let help = try await CLIResult.run([command, "--help"])
            #expect(help.status == 0)
            #expect(
                help.stdout.allSatisfy { $0.count <= 100 },
                "\(command): \(help.stdout.filter { $0.count > 100 })")
            if command == "broker" { continue }  // brokerReadsEveryOption covers it
            let listed = Self.listedOptions(help.stdout).subtracting(["--help"])
            #expect(!listed.isEmpty || command == "completion", "\(command) lists its options")
            let missing = listed.subtracting(covered[command] ?? [])
            #expect(missing.isEmpty, "\(command): add a run with \(missing.sorted()) to this test")
        }
    }

    @Test("the broker reads every option its --help lists: one run with all of them reaches READY")
    func brokerReadsEveryOption() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "broker-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let topology = directory.appendingPathComponent("topology.json").path
        try Data(#"{"services": []}"#.utf8).write(to: URL(fileURLWithPath: topology))
        let values: [String: String] = [
            "--control": "tcp://127.0.0.1:*", "--bus": "tcp://127.0.0.1:*", "--heartbeat-interval": "1000",
            "--liveness": "3", "--call-timeout": "5000", "--max-message-bytes": "8388608",
            "--bus-hwm": "1000",
            "--journal-size": "100", "--journal-age": "60000", "--step-timeout": "2000",
            "--ack-timeout": "5000",
            "--publish-memory": "100", "--journal-bytes": "1048576", "--max-names-per-connection": "10",
            "--max-subscriptions-per-connection": "100",
            "--max-heartbeat-window": "60000", "--max-event-names": "100", "--topology": topology,
            "--state-dir": directory.path, "--launcher": "launcher", "--app-timeout": "2000",
            "--boot-wait": "1000", "--spin-us": "0", "--metrics": "127.0.0.1:0", "--log-level": "info",
            "--log-format": "text",
        ]
        // CURVE (--key, --policy) and --metrics-token are read by their own tests (SecurityTests,
        // MetricsTests); --insecure only matters off loopback; the group's by BrokerGroupTests.
        let elsewhere: Set<String> = [
            "--key", "--policy", "--metrics-token", "--insecure", "--help", "--group", "--member",
            "--members",
            "--etcd", "--replicate", "--advertise", "--lease-ttl", "--group-keys",
        ]
        let help = try await CLIResult.run(["broker", "--help"])
        let listed = Self.listedOptions(help.stdout)
        #expect(listed.subtracting(elsewhere) == Set(values.keys), "every broker option has a value here")
        let arguments = values.sorted { $0.key < $1.key }.flatMap { [$0.key, $0.value] } + ["--insecure"]
        let broker = try ChildProcess("lifeline", ["broker"] + arguments)
        defer { broker.kill() }
        let ready = try await broker.waitForLine(.stdout) { $0.hasPrefix("READY") }
        #expect(ready.contains("control=tcp://127.0.0.1:"))
    }
}
