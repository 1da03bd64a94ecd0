import Foundation
import Lifeline
import LifelineBroker
import LifelineProtocol
import Testing

@Suite("lifeline up: the supervisor", .serialized, .timeLimit(.minutes(2)))
struct SupervisorTests {
    /// Writes `json` as a topology in a new run directory; returns (topology path, run directory).
    static func topology(_ json: JSONValue) throws -> (String, URL) {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "lifeline-up-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let path = directory.appendingPathComponent("topology.json").path
        try Data(JSONWriter.encode(json)).write(to: URL(fileURLWithPath: path))
        return (path, directory.appendingPathComponent("run"))
    }

    /// `lifeline up` of a broker on wildcard ports and one probe, `solo`, once it says UP: the
    /// supervisor, the topology's path, the run directory and the broker's control endpoint.
    static func upSolo() async throws -> (up: ChildProcess, path: String, run: URL, control: String) {
        let (path, run) = try Self.topology([
            "broker": ["control": "tcp://127.0.0.1:*", "bus": "tcp://127.0.0.1:*"],
            "services": [["name": "solo", "executable": "lifeline-probe"]],
        ])
        let up = try ChildProcess("lifeline", ["up", "--topology", path, "--run-dir", run.path])
        let ready = try await up.waitForLine(startingWith: "UP ", seconds: 30)
        return (up, path, run, String(ready.split(separator: " ")[1].dropFirst("control=".count)))
    }

    static func pid(_ run: URL, _ name: String) -> Int32? {
        (try? String(contentsOf: run.appendingPathComponent("\(name).pid"), encoding: .utf8)).flatMap {
            Int32($0.trimmingCharacters(in: .whitespacesAndNewlines))
        }
    }

    @Test(
        "a service killed again and again is restarted with backoff up to the restart intensity, then left alone; the rest runs on; SIGTERM stops all"
    )
    func restartIntensity() async throws {
        let (path, run) = try Self.topology([
            "broker": ["control": "tcp://127.0.0.1:*", "bus": "tcp://127.0.0.1:*"],
            // A window far longer than four kill-and-restart rounds take on a loaded machine.
            "supervisor": ["restarts": 3, "seconds": 90],
            "services": [
                ["name": "gateway", "executable": "lifeline-gateway"],
                [
                    "name": "flaky", "executable": "lifeline-probe", "args": ["--events", "test.tick"],
                    "restart": "always", "after": ["gateway"],
                ],
            ],
        ])
        defer { try? FileManager.default.removeItem(at: run.deletingLastPathComponent()) }
        let up = try ChildProcess("lifeline", ["up", "--topology", path, "--run-dir", run.path])
        defer { up.kill() }
        let ready = try await up.waitForLine(startingWith: "UP ", seconds: 30)
        let control = String(ready.split(separator: " ")[1].dropFirst("control=".count))
        var kills = 0
        while kills < 10 {
            guard let pid = Self.pid(run, "flaky") else { break }
            kill(pid, SIGKILL)
            kills += 1
            let expected = kills
            let gaveUp = { up.lines(.stderr).contains { $0.contains("gave up on flaky") } }
            try await LifecycleSemanticsTests.poll(seconds: 15) {
                gaveUp()
                    || up.lines(.stderr).filter { $0.contains("flaky was killed by signal 9") }.count
                        == expected
            }
            if gaveUp() { break }
            try await LifecycleSemanticsTests.poll(seconds: 15) {
                Self.pid(run, "flaky").map { $0 != pid && DownCommandProbe.isAlive($0) } ?? false
            }
        }
        let restarts = up.lines(.stderr).filter {
            $0.contains("flaky was killed") && $0.contains("restarting")
        }
        print("supervisor: \(kills) kills, \(restarts.count) restarts, then: \(up.lines(.stderr).last ?? "")")
        #expect(restarts.count == 3, "three restarts in the window, then it gives up")
        #expect(up.lines(.stderr).contains { $0.contains("gave up on flaky: 3 restarts within 90 s") })
        // The last flaky run is dropped when its heartbeats stop; the gateway stays.
        var names: [String] = []
        let deadline = ContinuousClock.now + .seconds(15)
        repeat {
            let services = try await CLIResult.run(["services", "--json", "--broker", control])
            names =
                (try? JSONParser.parse(services.output))?["services"]?.arrayValue?.compactMap {
                    $0["name"]?.stringValue
                }
                ?? []
            if names == ["gateway"] { break }
            try await Task.sleep(for: .milliseconds(100))  // polling with a deadline
        } while ContinuousClock.now < deadline
        #expect(names == ["gateway"], "the others keep running")

        up.kill(SIGTERM)
        #expect(try await up.waitForExit(seconds: 20) == 0)
        await up.waitForOutputToEnd()
        #expect(up.lines(.stderr).contains { $0.contains("stopped everything in") })
        let log = try String(contentsOf: run.appendingPathComponent("broker.log"), encoding: .utf8)
        #expect(log.contains("unregistered gateway"), "a clean stop: the service said goodbye")
    }

    @Test(
        "a supervisor killed -9 leaves its processes running: 'up' refuses to start beside them, 'down' stops them"
    )
    func leftovers() async throws {
        let (up, path, run, control) = try await Self.upSolo()
        defer {
            up.kill()
            try? FileManager.default.removeItem(at: run.deletingLastPathComponent())
        }
        let broker = try #require(Self.pid(run, "broker"))
        let solo = try #require(Self.pid(run, "solo"))
        defer {
            kill(solo, SIGKILL)
            kill(broker, SIGKILL)
        }
        up.kill(SIGKILL)
        _ = try await up.waitForExit(seconds: 10)
        #expect(DownCommandProbe.isAlive(broker) && DownCommandProbe.isAlive(solo), "left running")
        // Their logs' pipes have no reader any more: a line to log must not end them (SIGPIPE).
        #expect(try await CLIResult.run(["boot", "start", "--broker", control]).status == 0)
        #expect(try await CLIResult.run(["boot", "wait", "--broker", control]).status == 0)
        #expect(
            DownCommandProbe.isAlive(broker) && DownCommandProbe.isAlive(solo), "still running after logging")
        let again = try await CLIResult.run(["up", "--topology", path, "--run-dir", run.path])
        #expect(
            again.status == 1
                && again.errors.contains("left running: broker (pid \(broker)), solo (pid \(solo))"),
            "\(again.errors)")
        let down = try await CLIResult.run(["down", "--run-dir", run.path], seconds: 30)
        #expect(
            down.status == 0 && down.output.contains("had stopped; stopped what it left running"),
            "\(down.output) \(down.errors)")
        #expect(!DownCommandProbe.isAlive(broker) && !DownCommandProbe.isAlive(solo))
        #expect(Self.pid(run, "broker") == nil && Self.pid(run, "solo") == nil)
    }

    @Test(
        "a broker on wildcard ports killed -9 is restarted on the ports it had: its services and the UP address stay right"
    )
    func brokerRestartKeepsItsPorts() async throws {
        let (up, _, run, control) = try await Self.upSolo()
        defer {
            up.kill()
            // A supervisor killed -9 leaves its processes running: those the pid files name now.
            for name in ["solo", "broker"] { Self.pid(run, name).map { _ = kill($0, SIGKILL) } }
            try? FileManager.default.removeItem(at: run.deletingLastPathComponent())
        }
        let first = try #require(Self.pid(run, "broker"))
        kill(first, SIGKILL)
        try await up.waitForLine(.stderr, seconds: 30) { $0.contains("broker was killed by signal 9") }
        // The service registers again with the restarted broker, at the address it was given.
        var listed = false
        for _ in 0..<300 where !listed {
            let services = try await CLIResult.run(["services", "--json", "--broker", control])
            listed = services.status == 0 && services.output.contains("\"solo\"")
            if !listed { try await Task.sleep(for: .milliseconds(100)) }  // polling with a bound
        }
        #expect(listed, "solo is back on the broker at \(control)")
    }

    @Test(
        "a second 'up' on a run directory in use is refused by its lock and touches nothing; 'down' stops a wrapper script's service with the script's children"
    )
    func runDirectoryLockAndProcessGroups() async throws {
        let (path, run) = try Self.topology([
            "broker": ["control": "tcp://127.0.0.1:*", "bus": "tcp://127.0.0.1:*"],
            "services": [["name": "wrapped", "executable": "wrapper"]],
        ])
        let scratch = run.deletingLastPathComponent()
        defer { try? FileManager.default.removeItem(at: scratch) }
        // A wrapper that runs the probe as its child (no exec) and outlives a SIGTERM itself.
        let wrapper = scratch.appendingPathComponent("wrapper")
        try """
        #!/bin/sh
        trap '' TERM
        "\(Executables.url("lifeline-probe").path)" "$@"
        """.write(to: wrapper, atomically: true, encoding: .utf8)
        chmod(wrapper.path, 0o755)
        var topology = try JSONParser.parse(Array(try Data(contentsOf: URL(fileURLWithPath: path))))
        topology = [
            "broker": topology["broker"]!,
            "services": [["name": "wrapped", "executable": .string(wrapper.path)]],
        ]
        try Data(JSONWriter.encode(topology)).write(to: URL(fileURLWithPath: path))
        let up = try ChildProcess("lifeline", ["up", "--topology", path, "--run-dir", run.path])
        defer { up.kill() }
        _ = try await up.waitForLine(startingWith: "UP ", seconds: 30)
        let wrapped = try #require(Self.pid(run, "wrapped"))
        let again = try await CLIResult.run(["up", "--topology", path, "--run-dir", run.path])
        #expect(
            again.status == 1 && again.errors.contains("already up (supervisor pid \(up.pid))"),
            "\(again.errors)")
        #expect(Self.pid(run, "wrapped") == wrapped, "the pid files are left as they were")
        let down = try await CLIResult.run(["down", "--run-dir", run.path], seconds: 30)
        #expect(down.status == 0, "\(down.output) \(down.errors)")
        #expect(kill(-wrapped, 0) != 0, "nothing of the wrapper's process group is left")
    }

    @Test(
        "lifeline scale: a replicable service gets its new process (also in place of one that stopped for good); one that is not replicable is refused by the broker, and the process is stopped, not kept or restarted"
    )
    func scale() async throws {
        let (path, run) = try Self.topology([
            "broker": ["control": "tcp://127.0.0.1:*", "bus": "tcp://127.0.0.1:*"],
            "services": [
                ["name": "rates", "executable": "lifeline-rates", "restart": "on-failure"],
                ["name": "solo", "executable": "lifeline-probe", "args": ["--events", "test.tick"]],
            ],
        ])
        defer { try? FileManager.default.removeItem(at: run.deletingLastPathComponent()) }
        let up = try ChildProcess("lifeline", ["up", "--topology", path, "--run-dir", run.path])
        defer { up.kill() }
        let ready = try await up.waitForLine(startingWith: "UP ", seconds: 30)
        let control = String(ready.split(separator: " ")[1].dropFirst("control=".count))

        let grown = try await CLIResult.run(["scale", "rates", "2", "--run-dir", run.path], seconds: 40)
        #expect(grown.status == 0 && grown.output.contains("rates: 1 → 2 processes"), "\(grown.errors)")
        // A process that stopped cleanly stays stopped (on-failure): it is not one of the 2, and
        // scaling to 2 starts one in its place.
        let stopped = try #require(Self.pid(run, "rates@2"))
        kill(stopped, SIGTERM)
        try await up.waitForLine(.stderr, seconds: 20) {
            $0.contains("rates@2 exited with status 0") && $0.contains("stays stopped")
        }
        let again = try await CLIResult.run(["scale", "rates", "2", "--run-dir", run.path], seconds: 40)
        #expect(
            again.status == 0 && again.output.contains("rates: 1 → 2 processes"),
            "\(again.output) \(again.errors)")
        let replaced = try #require(Self.pid(run, "rates@2"))
        #expect(replaced != stopped && kill(replaced, 0) == 0, "a new rates@2 runs")
        let refused = try await CLIResult.run(["scale", "solo", "2", "--run-dir", run.path], seconds: 40)
        #expect(refused.status == 1)
        #expect(refused.errors.contains("solo@2 exited before it registered"), "\(refused.errors)")
        #expect(refused.errors.contains("not kept"))
        // A restart the supervisor may have scheduled as it exited (~250 ms) must not happen: the
        // scenario's own wait, past it.
        try await Task.sleep(for: .milliseconds(1500))
        #expect(Self.pid(run, "solo@2") == nil, "its pid file is gone, and no restart wrote it again")
        let lookup = try await CLIResult.run(["lookup", "solo", "--json", "--broker", control])
        #expect(lookup.status == 0, "the first solo still serves")

        up.kill(SIGTERM)
        #expect(try await up.waitForExit(seconds: 20) == 0)
        await up.waitForOutputToEnd()
        #expect(
            !up.lines(.stderr).contains { $0.contains("solo@2 up") || $0.contains("solo@2 started again") },
            "never started again")
    }

    @Test(
        "lifeline topology: --shell prints one line per process, named as the supervisor names them; the text shows replicas"
    )
    func topologyLines() async throws {
        let (path, run) = try Self.topology([
            "broker": ["control": "tcp://127.0.0.1:*", "bus": "tcp://127.0.0.1:*"],
            "services": [["name": "rates", "executable": "lifeline-rates", "replicas": 2]],
        ])
        defer { try? FileManager.default.removeItem(at: run.deletingLastPathComponent()) }
        let shell = try await CLIResult.run(["topology", path, "--shell"])
        #expect(shell.status == 0, "\(shell.errors)")
        #expect(
            shell.stdout.filter { $0.hasPrefix("service ") }.map { $0.split(separator: " ")[1] } == [
                "rates", "rates@2",
            ])
        let text = try await CLIResult.run(["topology", path])
        #expect(text.output.contains("service rates: lifeline-rates (2 replicas, restart:"), "\(text.output)")
        // What --json prints reads back as the same topology.
        let json = try await CLIResult.run(["topology", "deploy/topology.json", "--json"])
        #expect(
            try Topology(json: JSONParser.parse(json.output))
                == Topology(
                    json: JSONParser.parse(
                        Array(try Data(contentsOf: URL(fileURLWithPath: "deploy/topology.json"))))))
    }

    @Test(
        "the topology is checked first: unknown keys (in boot too), a bad restart policy, a missing or cyclic 'after', a bad boot section"
    )
    func topologyRefusals() async throws {
        let cases: [(JSONValue, String)] = [
            (
                ["services": [["name": "a", "executable": "lifeline-push", "restrat": "always"]]],
                "unknown key 'restrat'"
            ),
            (
                ["services": [["name": "a", "executable": "lifeline-push", "restart": "sometimes"]]],
                "restart must be always, on-failure or never"
            ),
            (
                ["services": [["name": "a", "executable": "lifeline-push", "after": ["b"]]]],
                "starts after 'b', which the topology does not launch"
            ),
            (
                [
                    "services": [
                        ["name": "a", "executable": "lifeline-push", "after": ["b"]],
                        ["name": "b", "executable": "lifeline-url", "after": ["a"]],
                    ]
                ], "form a cycle among: a, b"
            ),
            (["brokr": [:]], "unknown key 'brokr'"),
            (["services": [], "boot": ["frob": 1]], "boot: unknown key 'frob'"),
            (["services": [], "boot": ["phases": "setup"]], "boot.phases must be a list of names"),
            (
                ["services": [], "boot": ["waitMs": "soon"]],
                "boot.waitMs must be an integer within 0...3600000"
            ),
        ]
        for (json, message) in cases {
            let (path, run) = try Self.topology(json)
            defer { try? FileManager.default.removeItem(at: run.deletingLastPathComponent()) }
            let check = try await CLIResult.run(["topology", path])
            #expect(check.status == 1 && check.errors.contains(message), "\(check.errors)")
            let up = try await CLIResult.run(["up", "--topology", path, "--run-dir", run.path])
            #expect(up.status == 2 && up.errors.contains(message), "\(up.errors)")
        }
        // A member given twice in one object: the last would win, silently (no services at all).
        let (path, run) = try Self.topology([:])
        defer { try? FileManager.default.removeItem(at: run.deletingLastPathComponent()) }
        try Data(#"{"services": [{"name": "a", "executable": "lifeline-push"}], "services": []}"#.utf8)
            .write(to: URL(fileURLWithPath: path))
        let check = try await CLIResult.run(["topology", path])
        #expect(check.status == 1 && check.errors.contains("'services' is given twice"), "\(check.errors)")
        let up = try await CLIResult.run(["up", "--topology", path, "--run-dir", run.path])
        #expect(up.status == 2 && up.errors.contains("'services' is given twice"), "\(up.errors)")
        for command in [["up"], ["down"], ["scale", "a", "2"]] {
            let empty = try await CLIResult.run(command + ["--run-dir", ""])
            #expect(
                empty.status == 2 && empty.errors.contains("--run-dir needs a path, not an empty value"),
                "\(empty.errors)")
        }
    }
}

/// Whether a process runs (a zombie counts as gone), as `lifeline down` decides it.
enum DownCommandProbe {
    static func isAlive(_ pid: Int32) -> Bool {
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
            let close = stat.lastIndex(of: ")")
        else { return false }
        let state = stat[stat.index(after: close)...].trimmingCharacters(in: .whitespaces).first
        return state != "Z" && state != "X"
    }
}
