import Lifeline
import LifelineProtocol
import LifelineSupport

/// `lifeline apps SUBCOMMAND`: the Context's micro-app stack.
enum AppsCommand: CLICommand {
    static let name = "apps"
    static let summary = "start, list, find and exit micro-app sessions (the Context's stack)"
    static let help = """
        usage: lifeline apps start NAME [key=value | key:=json ...] [--mode MODE] [--clear-top] [--parent SESSION]
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

        options:
        \(ClientOptions.help)
        """

    static func run(_ arguments: inout CommandLineArguments) throws -> Int32 {
        let options = try ClientOptions(&arguments)
        guard let sub = arguments.positional() else {
            throw UsageError(
                "apps needs a subcommand: start, list, current, find, exit, exit-all, dismiss, pop-to-root, set-root, action"
            )
        }
        var header: [String: JSONValue]
        switch sub {
        case "start", "set-root":
            guard let app = arguments.positional() else { throw UsageError("apps \(sub) needs an app NAME") }
            header = ["op": .string(sub == "start" ? "start" : "setRoot"), "app": .string(app)]
            if let mode = try arguments.option("--mode") {
                guard LaunchMode(rawValue: mode) != nil else {
                    throw UsageError(
                        "unknown mode '\(mode)'; modes: \(LaunchMode.allCases.map(\.rawValue).joined(separator: ", "))"
                    )
                }
                header["mode"] = .string(mode)
            }
            if arguments.flag("--clear-top") { header["clearTop"] = true }
            if let parent = try arguments.option("--parent") { header["parent"] = .string(parent) }
            header["params"] = try TextFormat.payload(arguments.remainingPositionals())
        case "list": header = ["op": "list"]
        case "current": header = ["op": "current"]
        case "find":
            guard let app = arguments.positional() else { throw UsageError("apps find needs an app NAME") }
            header = ["op": "find", "app": .string(app), "all": .bool(arguments.flag("--all"))]
        case "exit":
            guard let target = arguments.positional() else {
                throw UsageError("apps exit needs a SESSION id or an app NAME")
            }
            header = ["op": "exit", "force": .bool(arguments.flag("--force"))]
            header[Self.isSessionID(target) ? "session" : "app"] = .string(target)
            if let result = try arguments.option("--result") {
                do { header["result"] = try JSONParser.parse(result) } catch {
                    throw UsageError("--result is not JSON: \(error)")
                }
            }
        case "exit-all": header = ["op": "exitAll"]
        case "dismiss": header = ["op": "dismiss"]
        case "pop-to-root": header = ["op": "popToRoot"]
        case "action":
            guard let target = arguments.positional(), let action = arguments.positional() else {
                throw UsageError("apps action needs a SESSION id or app NAME and an ACTION")
            }
            header = ["op": "action", "action": .string(action)]
            header[Self.isSessionID(target) ? "session" : "app"] = .string(target)
            if let body = arguments.positional() {
                do { header["body"] = try JSONParser.parse(body) } catch {
                    throw UsageError("the action body is not JSON: \(error)")
                }
            }
        default:
            throw UsageError("unknown apps subcommand '\(sub)'")
        }
        try arguments.finish()
        let reply = try options.client().request(
            ControlRequest(.apps, header: .object(header)),
            timeoutMilliseconds: max(options.timeoutMilliseconds, 60_000))
        let body = try reply.json()
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

    static func isSessionID(_ text: String) -> Bool {
        text == "top" || (text.hasPrefix("s") && Int(text.dropFirst()) != nil)
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
