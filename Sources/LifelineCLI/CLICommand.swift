import Foundation
import Lifeline
import LifelineProtocol
import LifelineSupport

/// One `lifeline` subcommand: its name, help, and what it does. `run` returns the exit status;
/// ``UsageError`` means 2, ``LifelineError`` means 1.
protocol CLICommand: SendableMetatype {
    static var name: String { get }
    static var summary: String { get }
    /// Usage line(s) and option help, printed by `--help`.
    static var help: String { get }
    static func run(_ arguments: inout CommandLineArguments) throws -> Int32
}

/// A command as the dispatcher sees it (built generically, so no existential is opened).
struct CommandEntry: Sendable {
    let name: String
    let summary: String
    let help: String
    let run: @Sendable (inout CommandLineArguments) throws -> Int32

    init<Command: CLICommand>(_ command: Command.Type) {
        name = Command.name
        summary = Command.summary
        help = Command.help
        run = { arguments in try Command.run(&arguments) }
    }
}

/// Options shared by every command that talks to a broker.
struct ClientOptions {
    static let help = help(timeout: "the broker's answer (default 5s)")

    /// The options' help, saying what `--timeout` bounds for this command.
    static func help(timeout: String) -> String {
        """
          --broker EP     broker control endpoint (default: $LIFELINE_BROKER or tcp://127.0.0.1:7200)
          --key FILE      your CURVE key pair, for a broker with CURVE (default: $LIFELINE_KEY)
          --broker-key K  the broker's public key or .pub file (default: $LIFELINE_BROKER_KEY)
          --timeout T     how long to wait for \(timeout) (500ms, 5s, 1m or milliseconds)
          --json          print JSON instead of text
        """
    }

    var broker: String
    var timeout: Duration
    /// The `--timeout` given on the command line, if any.
    var givenTimeout: Duration?
    var json: Bool

    init(_ arguments: inout CommandLineArguments) throws(UsageError) {
        broker = try arguments.option("--broker") ?? LifelineClient.defaultBroker
        if let problem = Self.endpointProblem(broker) { throw UsageError("--broker: \(problem)") }
        givenTimeout = try arguments.duration("--timeout", in: .milliseconds(1) ... .seconds(3600))
        timeout = givenTimeout ?? .seconds(5)
        json = arguments.flag("--json")
        credentials = try ClientCredentials.parse(&arguments)
    }

    /// Why `endpoint` cannot name a broker; nil when it can.
    static func endpointProblem(_ endpoint: String) -> String? {
        let expected = "expected tcp://HOST:PORT or ipc://PATH, not '\(endpoint)'"
        if endpoint.hasPrefix("ipc://") || endpoint.hasPrefix("inproc://") {
            return endpoint.split(separator: "/", omittingEmptySubsequences: false).count > 2
                && !endpoint.hasSuffix("://") ? nil : expected
        }
        guard endpoint.hasPrefix("tcp://") else { return expected }
        let address = endpoint.dropFirst(6)
        guard let colon = address.lastIndex(of: ":"), colon != address.startIndex else { return expected }
        let port = address[address.index(after: colon)...]
        guard let number = Int(port), (1...65535).contains(number) else { return expected }
        return nil
    }

    /// CURVE keys for a broker that runs with CURVE.
    var credentials: ClientCredentials?

    func client() throws -> BlockingClient { try BlockingClient(broker: broker, credentials: credentials) }
}
