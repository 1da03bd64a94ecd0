import Glibc
import Lifeline
import LifelineProtocol
import LifelineSupport

/// The `lifeline` command line: `lifeline COMMAND [options]`.
public enum CLI {
    static let commands: [CommandEntry] = [
        CommandEntry(BrokerCommand.self), CommandEntry(PublishCommand.self),
        CommandEntry(DispatchCommand.self), CommandEntry(TailCommand.self),
        CommandEntry(ServicesCommand.self), CommandEntry(LookupCommand.self),
        CommandEntry(DescribeCommand.self), CommandEntry(CallCommand.self), CommandEntry(ActorsCommand.self),
        CommandEntry(AppsCommand.self), CommandEntry(BootCommand.self), CommandEntry(StatusCommand.self),
        CommandEntry(StatsCommand.self),
        CommandEntry(EventsCommand.self), CommandEntry(TopologyCommand.self), CommandEntry(UpCommand.self),
        CommandEntry(DownCommand.self), CommandEntry(ScaleCommand.self), CommandEntry(KeysCommand.self),
        CommandEntry(PolicyCommand.self), CommandEntry(ConsoleCommand.self),
        CommandEntry(CompletionCommand.self),
    ]

    static let version = "0.1.0"

    static var overview: String {
        let width = commands.map { $0.name.count }.max() ?? 0
        let lines = commands.map {
            "  \($0.name.padding(toLength: width, withPad: " ", startingAt: 0))  \($0.summary)"
        }
        return """
            usage: lifeline COMMAND [options]

            Lifeline: lifecycle events and services across processes, over ZeroMQ.

            commands:
            \(lines.joined(separator: "\n"))

            Run 'lifeline COMMAND --help' for a command's options.
            Exit status: 0 success, 1 failure, 2 usage error.
            """
    }

    /// Runs the command line `arguments` (without the executable) and returns the exit status.
    public static func main(_ arguments: [String]) -> Int32 {
        guard let name = arguments.first,
            !name.hasPrefix("-") || ["-h", "--help", "--version"].contains(name)
        else {
            Console.error(overview)
            return 2
        }
        if name == "-h" || name == "--help" || name == "help" {
            Console.out(overview)
            return 0
        }
        if name == "--version" {
            Console.out("lifeline \(version) (protocol \(ProtocolID.control), libzmq \(ZMQVersion.library))")
            return 0
        }
        guard let command = commands.first(where: { $0.name == name }) else {
            Console.error(
                "lifeline: unknown command '\(name)'\(Suggestion.phrase(for: name, in: commands.map(\.name))); commands: \(commands.map(\.name).joined(separator: ", "))"
            )
            return 2
        }
        var rest = CommandLineArguments(Array(arguments.dropFirst()), declaring: command.options)
        if rest.flag(.helpFlag) {
            Console.out(command.help)
            return 0
        }
        do {
            return try command.run(&rest)
        } catch var error as UsageError {
            if let unknown = rest.unknownOption() { error = unknown }
            Console.error("lifeline \(name): \(error.message)\ntry 'lifeline \(name) --help'")
            return 2
        } catch let error as LifelineError {
            // A refusal of the key says so with its status, as a refused call does.
            let status = error.status == .forbidden ? "\(error.status): " : ""
            Console.error("lifeline \(name): \(status)\(error.message)")
            return 1
        } catch {
            Console.error("lifeline \(name): \(error)")
            return 1
        }
    }
}
