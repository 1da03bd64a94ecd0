import Foundation
import Lifeline
import LifelineProtocol
import Testing

@Suite(
    "Real processes: the Context's micro-apps, coordinators, crashes and restarts", .serialized,
    .timeLimit(.minutes(2)))
struct ContextTests {
    static func callbacks(_ host: ChildProcess) -> [String] {
        host.lines().filter { $0.hasPrefix("CALLBACK ") }.map { String($0.dropFirst(9)) }
    }

    static func stack(_ broker: BrokerProcess) async throws -> [JSONValue] {
        let list = try await broker.cli(["apps", "list", "--json"])
        return try JSONParser.parse(list.output)["stack"]?.arrayValue ?? []
    }

    @Test("the demo: Launcher → login → signed in → home → sign out → login, with the exact callback order")
    func demoFlow() async throws {
        let broker = try await BrokerProcess(["--launcher", "launcher"])
        let gateway = try await broker.service("lifeline-gateway")
        let shell = try await broker.service("lifeline-shell")
        defer { for child in [shell, gateway, broker.process] { child.kill() } }
        #expect(
            try await broker.cli(["dispatch", "didFinishLaunching"]).status == 0,
            "the launch boots; the Launcher starts last")
        try await shell.waitForLine { $0 == "CALLBACK s2 login didFinishLaunching" }
        #expect(
            Self.callbacks(shell) == [
                "s1 launcher didCreate", "s1 launcher willStartLaunching", "s1 launcher didFinishLaunching",
                "s2 login didCreate", "s1 launcher willPause", "s2 login willStartLaunching",
                "s2 login didFinishLaunching",
            ])

        let refused = try await broker.cli([
            "apps", "action", "login", "signIn", #"{"user":"ana","password":"x"}"#,
        ])
        #expect(refused.status == 1 && refused.errors.contains("wrong user or password"))
        #expect(
            try await broker.cli([
                "apps", "action", "login", "signIn", #"{"user":"ana","password":"secret"}"#,
            ]).status == 0)
        try await shell.waitForLine { $0 == "CALLBACK s3 home didFinishLaunching" }
        #expect(
            Array(Self.callbacks(shell).dropFirst(7)) == [
                "s2 login willTerminate", #"s1 launcher childDidFinish login {"signedIn":true,"user":"ana"}"#,
                "s1 launcher willResume",
                "s1 launcher didResume", "s3 home didCreate", "s1 launcher willPause",
                "s3 home willStartLaunching", "s3 home didFinishLaunching",
            ])
        #expect(try await Self.stack(broker).map { $0["app"] } == ["launcher", "home"])
        #expect(try await Self.stack(broker).last?["root"] == ["screen": "home", "user": "ana"])
        #expect(
            try await broker.cli(["call", "account", "profile"]).output == #"{"user":"ana"}"#,
            "signed in, the gateway also serves 'account', registered at run time")

        #expect(try await broker.cli(["apps", "action", "home", "edit"]).status == 0)
        let vetoed = try await broker.cli(["apps", "exit", "home"])
        #expect(
            vetoed.status == 1
                && vetoed.errors.contains("refused to terminate: its shouldTerminate answered NO"))
        #expect(try await broker.cli(["apps", "action", "home", "signOut"]).status == 0)
        try await shell.waitForLine { $0 == "CALLBACK s4 login didFinishLaunching" }
        #expect(try await Self.stack(broker).map { $0["app"] } == ["launcher", "login"])
        #expect(try await broker.cli(["lookup", "account"]).status == 1, "signed out: 'account' is gone")
        let redirected = try await broker.cli(["apps", "start", "home", "--json"])
        #expect(
            try JSONParser.parse(redirected.output)["session"]?["app"] == "login",
            "the gateway turns home into login while signed out")
    }

    @Test(
        "a host killed with kill -9 in the middle of the stack: its session crashes out, the stack stays consistent"
    )
    func hostKilled() async throws {
        let broker = try await BrokerProcess()
        let steady = try await broker.service("lifeline-probe", ["--name", "steady", "--apps", "base,top"])
        let fragile = try await broker.service(
            "lifeline-probe",
            ["--name", "fragile", "--apps", "middle", "--heartbeat-interval", "200", "--liveness", "2"])
        let tail = try ChildProcess(
            "lifeline", ["tail", "appDidCrash", "--json", "--broker", broker.control])
        defer { for child in [steady, fragile, tail, broker.process] { child.kill() } }
        try await tail.waitForLine(startingWith: "# tailing", .stderr)
        for (app, parent) in [("base", nil), ("middle", "s1"), ("top", "s2")] as [(String, String?)] {
            var arguments = ["apps", "start", app]
            if let parent { arguments += ["--parent", parent] }
            #expect(try await broker.cli(arguments).status == 0)
        }
        fragile.kill(SIGKILL)
        let crash = try JSONParser.parse(try await tail.waitForLine { $0.contains("appDidCrash") })
        #expect(crash["payload"] == ["session": "s2", "app": "middle", "host": "fragile"])
        try await steady.waitForLine { $0.hasPrefix("CALLBACK s1 base childDidFinish s2") }
        #expect(try await Self.stack(broker).map { $0["id"] } == ["s1", "s3"])
        #expect(try await Self.stack(broker).map { $0["state"] } == ["paused", "running"])
        let refused = try await broker.cli(["apps", "start", "middle"])
        #expect(
            refused.status == 1
                && refused.errors.contains("no live host offers the app 'middle'; offered apps: base, top"))
    }

    @Test("the broker restarted on its state directory keeps the stack; hosts re-attach their sessions")
    func brokerRestartKeepsStack() async throws {
        let state = FileManager.default.temporaryDirectory.appendingPathComponent(
            "lifeline-state-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: state) }
        let first = try await BrokerProcess(["--state-dir", state.path, "--launcher", "launcher"])
        let gateway = try await first.service("lifeline-gateway")
        let shell = try await first.service("lifeline-shell")
        defer { gateway.kill(); shell.kill() }
        #expect(try await first.cli(["boot", "start"]).status == 0)
        try await shell.waitForLine { $0 == "CALLBACK s2 login didFinishLaunching" }
        #expect(
            try await first.cli(["apps", "action", "login", "signIn", #"{"user":"bo","password":"secret"}"#])
                .status == 0)
        try await shell.waitForLine { $0 == "CALLBACK s3 home didFinishLaunching" }
        let before = try await Self.stack(first)

        first.process.kill(SIGKILL)
        _ = try await first.process.waitForExit()
        let second = try await BrokerProcess(
            control: first.control, bus: first.bus, ["--state-dir", state.path, "--launcher", "launcher"])
        defer { second.process.kill() }
        try await second.process.waitForLine(.stderr) { $0.contains("restored 2 micro-app session(s)") }
        try await second.process.waitForLine(.stderr, seconds: 15) {
            $0.contains("restored 2 session(s) of shell")
        }
        let after = try await Self.stack(second)
        #expect(after.map { $0["id"] } == before.map { $0["id"] })
        #expect(after.map { $0["state"] } == ["paused", "running"])
        #expect(after.last?["params"] == ["user": "bo"])
        #expect(
            try await second.cli(["apps", "action", "home", "signOut"]).status == 0,
            "the restored session still works")
        try await shell.waitForLine { $0 == "CALLBACK s4 login didFinishLaunching" }
    }

    @Test("a lazy service starts on its first lookup; a non-lazy one right after registering")
    func lazyServices() async throws {
        let broker = try await BrokerProcess()
        let eager = try await broker.service("lifeline-probe", ["--name", "eager"])
        let lazy = try await broker.service("lifeline-probe", ["--name", "sleepy", "--lazy"])
        defer { for child in [eager, lazy, broker.process] { child.kill() } }
        #expect(!eager.lines().contains { $0.hasPrefix("STARTED") }, "services start when the boot runs")
        #expect(try await broker.cli(["boot", "start"]).status == 0)
        try await eager.waitForLine(startingWith: "STARTED eager")
        let before = try await broker.cli(["services", "--json"])
        let records = try JSONParser.parse(before.output)["services"]?.arrayValue ?? []
        #expect(records.first { $0["name"] == "sleepy" }?["started"] == false)
        #expect(!lazy.lines().contains { $0.hasPrefix("STARTED") })
        let found = try await broker.cli(["lookup", "sleepy", "--json"])
        #expect(try JSONParser.parse(found.output)["started"] == true)
        #expect(lazy.lines().contains("STARTED sleepy"))
    }
}
