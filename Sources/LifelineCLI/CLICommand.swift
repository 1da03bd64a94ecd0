import Foundation
import Lifeline
import LifelineProtocol
import LifelineSupport

/// One `lifeline` subcommand: its name, help, options, and what it does. `run` returns the exit
/// status; ``UsageError`` means 2, ``LifelineError`` means 1.
protocol CLICommand: SendableMetatype {
    static var name: String { get }
    static var summary: String { get }
    /// The usage lines and what the command does: `--help` prints it above the options.
    static var usage: String { get }
    /// Every option the command reads: the reader accepts exactly these and `--help` lists them.
    static var options: [CommandLineOption] { get }
    static func run(_ arguments: inout CommandLineArguments) throws -> Int32
}

extension CLICommand {
    /// What `--help` prints: the usage, then every declared option.
    static var help: String {
        "\(usage)\n\noptions:\n\(CommandLineOption.helpText(options + [.helpFlag]))"
    }
}

/// A command as the dispatcher sees it (built generically, so no existential is opened).
struct CommandEntry: Sendable {
    let name: String
    let summary: String
    let help: String
    let options: [CommandLineOption]
    let run: @Sendable (inout CommandLineArguments) throws -> Int32

    init<Command: CLICommand>(_ command: Command.Type) {
        name = Command.name
        summary = Command.summary
        help = Command.help
        options = Command.options
        run = { arguments in try Command.run(&arguments) }
    }
}

/// Options shared by every command that talks to a broker.
struct ClientOptions {
    static let broker = CommandLineOption.value(
        "--broker", "EP[,EP…]",
        help:
            "broker control endpoint, or a broker group's members' list (default: $LIFELINE_BROKER or tcp://127.0.0.1:7200)"
    )
    static let timeout = CommandLineOption.value(
        "--timeout", "T", help: "how long to wait for the broker's answer (default 5s)")
    static let json = CommandLineOption.flag("--json", help: "print JSON instead of text")

    /// The options every broker client reads, saying what `--timeout` bounds for this command.
    static func options(timeout: String) -> [CommandLineOption] {
        [
            broker, LifelineClient.Credentials.keyOption, LifelineClient.Credentials.brokerKeyOption,
            Self.timeout.helping("how long to wait for \(timeout) (500ms, 5s, 1m or milliseconds)"), json,
        ]
    }

    var broker: String
    var timeout: Duration
    /// The `--timeout` given on the command line, if any.
    var givenTimeout: Duration?
    var json: Bool

    init(_ arguments: inout CommandLineArguments) throws(UsageError) {
        broker = try arguments.option(Self.broker) ?? LifelineClient.defaultBroker
        if let problem = Endpoint.problem(inList: broker) { throw UsageError("--broker: \(problem)") }
        givenTimeout = try arguments.duration(Self.timeout, in: .milliseconds(1) ... .seconds(3600))
        timeout = givenTimeout ?? .seconds(5)
        json = arguments.flag(Self.json)
        credentials = try LifelineClient.Credentials.parse(&arguments)
    }

    /// CURVE keys for a broker that runs with CURVE.
    var credentials: LifelineClient.Credentials?

    func client() throws -> BlockingClient { try BlockingClient(broker: broker, credentials: credentials) }

    /// How long a lookup that only helps (a required-field check) may take: at most a second, so a
    /// slow broker does not double the command's wait; the whole `--timeout` when it is `needed`.
    func lookupTimeout(needed: Bool) -> Duration { needed ? timeout : min(timeout, .seconds(1)) }

    /// A client made at its first use and given again after: a command's lookup (a field's declared
    /// type) and its request share one, so that with no broker the second fails at once.
    func sharedClient() -> () throws -> BlockingClient {
        var made: BlockingClient?
        return {
            if let made { return made }
            let client = try self.client()
            made = client
            return client
        }
    }
}
