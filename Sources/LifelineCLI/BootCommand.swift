import Foundation
import Lifeline
import LifelineProtocol
import LifelineSupport

/// `lifeline boot report|run|start|wait`.
enum BootCommand: CLICommand {
    static let name = "boot"
    static let summary = "the boot loader: report (blame, critical chain, timeline), run a task, start, wait"
    static let usage = """
        usage: lifeline boot report [--json] [--svg FILE]
               lifeline boot run TASK
               lifeline boot start [key=value | key:=json ...]   (the launch options)
               lifeline boot wait

        A boot starts on didFinishLaunching (its launchOptions reach the tasks' conditions), on
        didBecomeActive when none ran yet, or with 'boot start'. It waits for the topology's services,
        then runs every task: phases in order, synchronous tasks one at a time by priority,
        asynchronous ones concurrently, each after its dependencies.

        report   the last boot: every task's start, duration, process and outcome; the blame list
                 (slowest first) and the critical chain (@start +duration), as systemd-analyze;
                 --svg FILE draws the timeline
        run      runs one task now (executeTaskWithName); once per boot, once ever when run-once
        start    starts a boot; exits 1 when the broker refuses its plan at once (a cycle, say;
                 a boot that waits for services is judged later: see wait)
        wait     shows the boot task by task until it finishes; exits 1 when it failed
        """
    static let svg = CommandLineOption.value(
        "--svg", "FILE", help: "report: also draw the timeline as SVG into FILE")
    static let options =
        [svg]
        + ClientOptions.options(
            timeout:
                "report and start: the broker's answer (5s); run: the task (60s); wait: the boot (120s)"
        )

    static func run(_ arguments: inout CommandLineArguments) throws -> Int32 {
        let options = try ClientOptions(&arguments)
        let svg = try arguments.option(Self.svg)
        guard let sub = arguments.positional() else {
            throw UsageError("boot needs a subcommand: report, run, start or wait")
        }
        if svg != nil && sub != "report" { throw UsageError("--svg is an option of 'boot report'") }
        switch sub {
        case "report":
            try arguments.finish()
            let report = try options.client().boot(.report, timeout: options.timeout)
            if let svg {
                do {
                    try BootTimeline.svg(report).write(toFile: svg, atomically: true, encoding: .utf8)
                } catch {
                    let directory = (svg as NSString).deletingLastPathComponent
                    let folder = directory.isEmpty ? "." : directory
                    let reason =
                        !FileManager.default.fileExists(atPath: folder)
                        ? "the directory \(folder) does not exist"
                        : !FileManager.default.isWritableFile(atPath: folder)
                            ? "the directory \(folder) is not writable" : "the file could not be written"
                    throw LifelineError(.badRequest, "cannot write the timeline to \(svg): \(reason)")
                }
                Console.error("wrote the timeline to \(svg)")
            }
            Console.out(options.json ? report.description : text(report))
            return 0
        case "run":
            guard let task = arguments.positional() else { throw UsageError("boot run needs a TASK") }
            try arguments.finish()
            let body = try options.client().boot(
                .run(task: task), timeout: options.givenTimeout ?? .seconds(60))
            if options.json {
                Console.out(body.description)
            } else {
                Console.out(
                    "\(task): \(body["outcome"]?.stringValue ?? "?")"
                        + (body["reason"]?.stringValue.map { " (\($0))" } ?? ""))
            }
            return body["outcome"] == "failed" ? 1 : 0
        case "start":
            let launchOptions = try TextFormat.payload(arguments.remainingPositionals())
            try arguments.finish()
            let client = try options.client()
            let body = try client.boot(.start(launchOptions: launchOptions), timeout: options.timeout)
            let refused = body["state"] == "refused"
            // A boot refused at once (a cycle in its tasks, say) is a failure, and its report says why.
            let why =
                refused && !options.json
                ? (try? client.boot(.report, timeout: options.timeout))?["error"]?.stringValue : nil
            Console.out(
                options.json
                    ? body.description
                    : "boot #\(body["boot"]?.intValue ?? 0) \(body["state"]?.stringValue ?? "")"
                        + (why.map { ": " + ($0.hasPrefix("boot refused: ") ? String($0.dropFirst(14)) : $0) }
                            ?? ""))
            return refused ? 1 : 0
        case "wait":
            try arguments.finish()
            return try wait(options)
        default:
            throw UsageError("unknown boot subcommand '\(sub)'")
        }
    }

    /// Streams the boot's progress: what finished already, then each task as it finishes.
    static func wait(_ options: ClientOptions) throws -> Int32 {
        let client = try options.client()
        let subscriber = try client.subscribeWhole(
            to: [.bootDidStart, .bootTaskDidFinish, .bootDidFinish],
            timeout: options.timeout)
        var printed: Set<String> = []
        let patience = options.givenTimeout ?? .seconds(120)
        let deadline = SystemClock.monotonicNanoseconds() + patience.wholeNanoseconds
        // The boot this waits for, once one is seen waiting or running.
        var awaited: Int64?
        func finished(_ report: JSONValue) -> Int32? {
            let number = report["boot"]?.intValue
            if awaited == nil, report["restored"] != true,
                ["waiting", "running"].contains(report["state"]?.stringValue ?? "")
            {
                awaited = number
            }
            if let awaited, report["state"] == "none" {
                Console.out(
                    "boot #\(awaited) is lost: the broker started again without its state directory, and has not booted since"
                )
                return 1
            }
            // The last boot of the broker's earlier life is not the one to wait for, unless it is
            // the one this waited for, ended by the broker's restart.
            if report["restored"] == true && (awaited == nil || number != awaited) { return nil }
            for task in report["tasks"]?.arrayValue ?? [] {
                guard let name = task["name"]?.stringValue,
                    ["done", "skipped", "failed"].contains(task["state"]?.stringValue ?? ""),
                    !printed.contains(name)
                else { continue }
                printed.insert(name)
                Console.out(
                    line(
                        name: name, outcome: task["state"]?.stringValue ?? "",
                        duration: task["durationMs"]?.intValue, reason: task["reason"]?.stringValue))
            }
            switch report["state"]?.stringValue {
            case "done":
                Console.out(
                    "boot #\(report["boot"]?.intValue ?? 0) done in \(report["durationMs"]?.intValue ?? 0) ms"
                )
                return 0
            case "failed", "refused":
                Console.out(
                    "boot #\(report["boot"]?.intValue ?? 0) \(report["state"]?.stringValue ?? ""): \(report["error"]?.stringValue ?? "")"
                )
                return 1
            default: return nil
            }
        }
        let report = try client.boot(.report, timeout: options.timeout)
        if report["state"] == "waiting" { Console.out("waiting for the services the boot expects …") }
        if report["state"] == "running", report["restored"] != true {
            Console.out("waiting for boot #\(report["boot"]?.intValue ?? 0) to finish …")
        }
        if let status = finished(report) { return status }
        var nextLook = SystemClock.monotonicNanoseconds() + 2_000_000_000
        while SystemClock.monotonicNanoseconds() < deadline {
            // A broker that restarted ends its boot without bootDidFinish: the report says so.
            if SystemClock.monotonicNanoseconds() >= nextLook {
                nextLook = SystemClock.monotonicNanoseconds() + 2_000_000_000
                if let report = try? client.boot(.report, timeout: .seconds(2)), let status = finished(report)
                {
                    return status
                }
            }
            guard let event = try subscriber.next(timeout: .milliseconds(500)) else { continue }
            let payload = (try? JSONParser.parse(event.payload)) ?? .null
            if event.name == .bootDidStart, awaited == nil { awaited = payload["boot"]?.intValue }
            if event.name == .bootTaskDidFinish, let name = payload["task"]?.stringValue,
                !printed.contains(name)
            {
                printed.insert(name)
                Console.out(
                    line(
                        name: name, outcome: payload["outcome"]?.stringValue ?? "",
                        duration: payload["durationMs"]?.intValue, reason: payload["reason"]?.stringValue))
            }
            if event.name == .bootDidFinish {
                let final = try client.boot(.report, timeout: options.timeout)
                return finished(final) ?? 1
            }
        }
        guard awaited != nil || !printed.isEmpty else {
            throw LifelineError(
                .timeout,
                "no boot started within \(patience.wholeMilliseconds) ms (a boot starts on didFinishLaunching, or with 'lifeline boot start')"
            )
        }
        throw LifelineError(
            .timeout,
            "the boot did not finish within \(patience.wholeMilliseconds) ms (it goes on; 'lifeline boot report' shows it)"
        )
    }

    static func line(name: String, outcome: String, duration: Int64?, reason: String?) -> String {
        let mark = outcome == "done" ? "✓" : (outcome == "skipped" ? "–" : "✗")
        let time = duration.map { "\($0) ms" } ?? ""
        return
            "  \(mark) \(name.padding(toLength: 28, withPad: " ", startingAt: 0)) \(time.padding(toLength: 9, withPad: " ", startingAt: 0))"
            + (reason.map { " \(outcome): \($0)" } ?? "")
    }

    static func seconds(_ milliseconds: Int64) -> String {
        String(format: "%.3fs", Double(milliseconds) / 1000)
    }

    /// The blame list and critical chain, as systemd-analyze prints them.
    static func text(_ report: JSONValue) -> String {
        if report["state"] == "none" {
            let planned = report["planned"]?.arrayValue ?? []
            return
                "no boot has run yet (it starts on didFinishLaunching, or 'lifeline boot start'); \(planned.count) tasks are declared:\n"
                + planned.map { "  \($0["name"]?.stringValue ?? "") (\($0["phase"]?.stringValue ?? ""))" }
                .joined(separator: "\n")
        }
        let tasks = Dictionary(
            uniqueKeysWithValues: (report["tasks"]?.arrayValue ?? []).compactMap { task in
                task["name"]?.stringValue.map { ($0, task) }
            })
        var lines = [
            "boot #\(report["boot"]?.intValue ?? 0) \(report["state"]?.stringValue ?? "") in \(report["durationMs"]?.intValue ?? 0) ms"
                + (report["launchOptions"].map {
                    $0 == .emptyObject || $0 == .null ? "" : " (launch options \($0))"
                }
                    ?? ""),
            "phases: "
                + (report["phases"]?.arrayValue ?? []).compactMap(\.stringValue).joined(separator: " → "),
        ]
        if let error = report["error"]?.stringValue { lines.append("stopped: \(error)") }
        let missing = (report["missing"]?.arrayValue ?? []).compactMap(\.stringValue)
        if !missing.isEmpty { lines.append("missing services: \(missing.joined(separator: ", "))") }
        lines.append("\nblame (slowest first):")
        for name in (report["blame"]?.arrayValue ?? []).compactMap(\.stringValue) {
            guard let task = tasks[name] else { continue }
            let duration = "\(task["durationMs"]?.intValue ?? 0)ms"
            let notes = [
                task["service"]?.stringValue, task["phase"]?.stringValue,
                task["async"] == true ? "async" : nil, task["state"] == "failed" ? "FAILED" : nil,
            ]
            .compactMap { $0 }.joined(separator: ", ")
            lines.append(
                "\(String(repeating: " ", count: max(0, 9 - duration.count)))\(duration) \(name) (\(notes))")
        }
        lines.append("\ncritical chain (@start +duration):")
        for (depth, name) in (report["criticalChain"]?.arrayValue ?? []).compactMap(\.stringValue)
            .enumerated()
        {
            guard let task = tasks[name] else { continue }
            let prefix = depth == 0 ? "" : String(repeating: "  ", count: depth - 1) + "└─"
            lines.append(
                "\(prefix)\(name) @\(seconds(task["startMs"]?.intValue ?? 0)) +\(seconds(task["durationMs"]?.intValue ?? 0))"
            )
        }
        let others = tasks.values.filter { $0["state"] == "skipped" || $0["state"] == "failed" }.sorted {
            ($0["name"]?.stringValue ?? "") < ($1["name"]?.stringValue ?? "")
        }
        if !others.isEmpty {
            lines.append("\nnot done:")
            for task in others {
                lines.append(
                    "  \(task["name"]?.stringValue ?? "") \(task["state"]?.stringValue ?? ""): \(task["reason"]?.stringValue ?? "")"
                )
            }
        }
        return lines.joined(separator: "\n")
    }
}
