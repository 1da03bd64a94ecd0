import Lifeline
import LifelineProtocol
import LifelineSupport

/// `lifeline lookup NAME`.
enum LookupCommand: CLICommand {
    static let name = "lookup"
    static let summary = "find a service by name (the Context's findServiceByName)"
    static let usage = """
        usage: lifeline lookup NAME [options]

        Prints the service's record; exits 1 with "no service named 'NAME'" when there is none.
        """
    static let options = ClientOptions.options(timeout: "the service's record (default 5s)")

    static func run(_ arguments: inout CommandLineArguments) throws -> Int32 {
        let options = try ClientOptions(&arguments)
        guard let name = arguments.positional() else { throw UsageError("lookup needs a service NAME") }
        try arguments.finish()
        let record = try options.client().lookup(name, timeout: options.timeout)
        if options.json {
            Console.out(record.json.description)
            return 0
        }
        let registration = record.registration
        Console.out(
            """
            name:            \(registration.name)
            pid:             \(registration.pid)
            host:            \(registration.host)
            events:          \(registration.events.isEmpty ? "-" : registration.events.map(\.rawValue).joined(separator: ", "))
            methods:         \(registration.methods.isEmpty ? "-" : registration.methods.joined(separator: ", "))
            heartbeat:       every \(registration.heartbeat.intervalMilliseconds) ms, liveness \(registration.heartbeat.liveness)
            uptime:          \(TextFormat.duration(milliseconds: record.uptimeMilliseconds))
            last heartbeat:  \(TextFormat.duration(milliseconds: record.lastSeenMillisecondsAgo)) ago
            """)
        return 0
    }
}
