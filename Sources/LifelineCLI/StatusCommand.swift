import Lifeline
import LifelineProtocol
import LifelineSupport

/// `lifeline status`.
enum StatusCommand: CLICommand {
    static let name = "status"
    static let summary = "show the broker: lifecycle state, epoch, last sequence, journal, services"
    static let usage = """
        usage: lifeline status [options]
        """
    static let options = ClientOptions.options(timeout: "each of the broker's answers (default 5s)")

    static func run(_ arguments: inout CommandLineArguments) throws -> Int32 {
        let options = try ClientOptions(&arguments)
        try arguments.finish()
        let client = try options.client()
        let info = try client.hello(timeout: options.timeout)
        // Listing the services needs 'observe' on a broker with a policy: without it, status shows none.
        let services: [ServiceRecord]
        do {
            services = try client.services(timeout: options.timeout)
        } catch let error as LifelineError where error.code == .forbidden {
            Console.error("# \(error.message)")
            services = []
        }
        if options.json {
            guard case .object(var members) = info.json else { return 1 }
            members["services"] = .int(Int64(services.count))
            Console.out(JSONValue.object(members).description)
            return 0
        }
        let journal = info.journal
        let dropped = services.filter { $0.dropped > 0 }
        Console.out(
            """
            lifecycle:  \(info.lifecycle.rawValue)
            broker:     pid \(info.pid) on \(info.host), version \(info.version)
            control:    \(options.broker)
            bus:        \(info.bus)
            epoch:      \(info.epoch)
            sequence:   \(info.sequence)
            journal:    \(journal.events) events from #\(journal.firstSequence) (keeps \(journal.capacity), \(journal.maximumAgeMilliseconds / 1000) s)
            heartbeat:  every \(info.heartbeat.intervalMilliseconds) ms, liveness \(info.heartbeat.liveness)
            services:   \(services.count)\(services.isEmpty ? "" : " (" + services.map(\.name).joined(separator: ", ") + ")")
            dropped:    \(dropped.isEmpty ? "none" : dropped.map { "\($0.name) \($0.dropped)" }.joined(separator: ", ")) (events the services' handlers fell too far behind for)
            """)
        return 0
    }
}
