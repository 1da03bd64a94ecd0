import Lifeline
import LifelineProtocol
import LifelineSupport

/// `lifeline apps SUBCOMMAND`: the Context's micro-app stack.
enum AppsCommand: CLICommand {
    static let name = "apps"
    static let summary = "start, list, find and exit micro-app sessions (the Context's stack)"
    static let usage = """
        usage: lifeline apps start NAME [key=value | key:=json ...] [--mode MODE] [--clear-top]
                              [--parent SESSION]
               lifeline apps list | current
               lifeline apps find NAME [--all]
               lifeline apps exit SESSION|NAME [--force] [--result JSON]
               lifeline apps exit-all | dismiss | pop-to-root
               lifeline apps set-root NAME [key=value ...]
               lifeline apps action SESSION|NAME ACTION [JSON]

        Sessions are named by id (s3) or by app name (the newest session of it). Modes:
        pushWithAnimation (default), pushNoAnimation, presentWithAnimation, presentNoAnimation.
        --clear-top pops back to an existing session of the app instead of pushing a new one.
        Only the top session exits normally (its shouldTerminate may refuse); --force exits any.
        Each command waits until the sessions' callbacks have run.
        """
    static let mode = CommandLineOption.value(
        "--mode", "MODE",
        help:
            "start: pushWithAnimation (default), pushNoAnimation, presentWithAnimation or presentNoAnimation")
    static let clearTop = CommandLineOption.flag(
        "--clear-top", help: "start: pop back to an existing session of the app instead of pushing a new one")
    static let parent = CommandLineOption.value(
        "--parent", "SESSION",
        help:
            "start: the session the new one is a child of, which hears childDidFinish when it exits (default: none)"
    )
    static let all = CommandLineOption.flag(
        "--all", help: "find: every session of the app, not only the newest")
    static let force = CommandLineOption.flag(
        "--force", help: "exit: exit a session that is not on top, without asking its shouldTerminate")
    static let result = CommandLineOption.value(
        "--result", "JSON", help: "exit: the result handed to the parent's childDidFinish")
    static let options =
        [mode, clearTop, parent, all, force, result]
        + ClientOptions.options(
            timeout: "the operation's answer: for a change, every callback answered (default 60s)")

    static func run(_ arguments: inout CommandLineArguments) throws -> Int32 {
        let options = try ClientOptions(&arguments)
        guard let sub = arguments.positional() else {
            throw UsageError(
                "apps needs a subcommand: start, list, current, find, exit, exit-all, dismiss, pop-to-root, set-root, action"
            )
        }
        let operation: AppsRequest
        switch sub {
        case "start", "set-root":
            // Options first: a value must not be taken for the app's name.
            let modeText = try arguments.option(Self.mode)
            let clearTop = arguments.flag(Self.clearTop)
            let parent = try arguments.option(Self.parent)
            guard let app = arguments.positional() else { throw UsageError("apps \(sub) needs an app NAME") }
            var mode = LaunchMode.pushWithAnimation
            if let text = modeText {
                guard let parsed = LaunchMode(rawValue: text) else {
                    throw UsageError(
                        "unknown mode '\(text)'; modes: \(LaunchMode.allCases.map(\.rawValue).joined(separator: ", "))"
                    )
                }
                mode = parsed
            }
            operation = .start(
                AppStart(
                    app: app, params: try TextFormat.payload(arguments.remainingPositionals()), mode: mode,
                    clearTop: clearTop, parent: parent, replacesRoot: sub == "set-root"))
        case "list": operation = .list
        case "current": operation = .current
        case "find":
            guard let app = arguments.positional() else { throw UsageError("apps find needs an app NAME") }
            operation = .find(app: app, all: arguments.flag(Self.all))
        case "exit":
            let force = arguments.flag(Self.force)
            let resultText = try arguments.option(Self.result)
            guard let target = arguments.positional() else {
                throw UsageError("apps exit needs a SESSION id or an app NAME")
            }
            var exit = AppExit(target: SessionTarget(parsing: target), force: force)
            if let result = resultText {
                do { exit.result = try JSONParser.parse(result) } catch {
                    throw UsageError("--result is not JSON: \(error)")
                }
            }
            operation = .exit(exit)
        case "exit-all": operation = .exitAll
        case "dismiss": operation = .dismiss
        case "pop-to-root": operation = .popToRoot
        case "action":
            guard let target = arguments.positional(), let action = arguments.positional() else {
                throw UsageError("apps action needs a SESSION id or app NAME and an ACTION")
            }
            var body = JSONValue.null
            if let text = arguments.positional() {
                do { body = try JSONParser.parse(text) } catch {
                    throw UsageError("the action body is not JSON: \(error)")
                }
            }
            operation = .action(target: SessionTarget(parsing: target), action: action, body: body)
        default:
            throw UsageError("unknown apps subcommand '\(sub)'")
        }
        try arguments.finish()
        let body = try options.client().apps(
            operation, timeout: options.givenTimeout ?? .seconds(60))
        if options.json || sub == "action" {
            Console.out(body.description)
            return 0
        }
        switch sub {
        case "list":
            Console.out(Self.table(body["stack"]?.arrayValue ?? []))
        case "current":
            Console.out(
                body["session"].flatMap { $0 == .null ? nil : $0 }.map { Self.table([$0]) }
                    ?? "the stack is empty")
        case "find":
            Console.out(Self.table(body["sessions"]?.arrayValue ?? [body]))
        default:
            var lines: [String] = []
            if let session = body["session"] {
                lines.append(
                    "session \(session["id"]?.stringValue ?? "?") (\(session["app"]?.stringValue ?? "?")) is on top"
                )
            }
            for exited in body["exited"]?.arrayValue ?? [] {
                lines.append(
                    "exited \(exited["id"]?.stringValue ?? "?") (\(exited["app"]?.stringValue ?? "?"))")
            }
            lines.append(Self.table(body["stack"]?.arrayValue ?? []))
            Console.out(lines.joined(separator: "\n"))
        }
        return 0
    }

    /// The stack, bottom to top.
    static func table(_ sessions: [JSONValue]) -> String {
        if sessions.isEmpty { return "the stack is empty" }
        let rows = sessions.map { session in
            [
                session["id"]?.stringValue ?? "", session["app"]?.stringValue ?? "",
                session["state"]?.stringValue ?? "",
                session["mode"]?.stringValue ?? "", session["host"]?.stringValue ?? "",
                session["parent"]?.stringValue ?? "-",
                (session["params"] ?? .null).description, (session["root"] ?? .null).description,
            ]
        }
        return TextFormat.table(
            ["SESSION", "APP", "STATE", "MODE", "HOST", "PARENT", "PARAMS", "ROOT"], rows)
    }
}
