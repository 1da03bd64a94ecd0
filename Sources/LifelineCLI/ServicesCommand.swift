import Lifeline
import LifelineProtocol
import LifelineSupport

/// `lifeline services`.
enum ServicesCommand: CLICommand {
    static let name = "services"
    static let summary = "list the registered services"
    static let help = """
        usage: lifeline services [options]

        Prints one row per registered service: name, pid, host, the events it subscribes to, the
        methods it answers, how long it has been registered and when it last heartbeated.

        options:
        \(ClientOptions.help)
        """

    static func run(_ arguments: inout CommandLineArguments) throws -> Int32 {
        let options = try ClientOptions(&arguments)
        try arguments.finish()
        let records = try options.client().services(timeout: options.timeout)
        if options.json {
            Console.out(JSONValue.object(["services": .array(records.map(\.json))]).description)
            return 0
        }
        if records.isEmpty {
            Console.out("no services registered")
            return 0
        }
        let rows = records.map { record in
            [
                record.name, String(record.registration.pid), record.registration.host,
                record.registration.events.isEmpty
                    ? "-" : record.registration.events.map(\.rawValue).joined(separator: ","),
                record.registration.methods.isEmpty
                    ? "-" : record.registration.methods.joined(separator: ","),
                TextFormat.duration(milliseconds: record.uptimeMilliseconds),
                TextFormat.duration(milliseconds: record.lastSeenMillisecondsAgo) + " ago",
                String(record.dropped),
            ]
        }
        Console.out(
            TextFormat.table(
                ["NAME", "PID", "HOST", "EVENTS", "METHODS", "UPTIME", "LAST HEARTBEAT", "DROPPED"], rows))
        return 0
    }
}
