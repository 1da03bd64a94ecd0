import Lifeline
import LifelineProtocol
import LifelineSupport

/// `lifeline status`.
enum StatusCommand: CLICommand {
    static let name = "status"
    static let summary = "show the broker: lifecycle state, epoch, last sequence, journal, services"
    static let help = """
        usage: lifeline status [options]

        options:
        \(ClientOptions.help)
        """

    static func run(_ arguments: inout CommandLineArguments) throws -> Int32 {
        let options = try ClientOptions(&arguments)
        try arguments.finish()
        let client = try options.client()
        let hello = try client.request(
            ControlRequest(.hello), timeoutMilliseconds: options.timeoutMilliseconds
        ).json()
        let list = try client.request(ControlRequest(.list), timeoutMilliseconds: options.timeoutMilliseconds)
            .json()
        let services = list["services"]?.arrayValue ?? []
        if options.json {
            guard case .object(var members) = hello else { return 1 }
            members["services"] = .int(Int64(services.count))
            Console.out(JSONValue.object(members).description)
            return 0
        }
        let info = try BrokerInfo(json: hello)
        Console.out(
            """
            lifecycle:  \(hello["lifecycle"]?.stringValue ?? "?")
            broker:     pid \(info.pid) on \(info.host), version \(info.version)
            control:    \(options.broker)
            bus:        \(info.bus)
            epoch:      \(info.epoch)
            sequence:   \(info.sequence)
            journal:    \(hello["journal"]?["events"]?.intValue ?? 0) events from #\(hello["journal"]?["firstSequence"]?.intValue ?? 0) (keeps \(hello["journal"]?["capacity"]?.intValue ?? 0), \((hello["journal"]?["maxAgeMs"]?.intValue ?? 0) / 1000) s)
            heartbeat:  every \(info.heartbeat.intervalMilliseconds) ms, liveness \(info.heartbeat.liveness)
            services:   \(services.count)\(services.isEmpty ? "" : " (" + services.compactMap { $0["name"]?.stringValue }.joined(separator: ", ") + ")")
            """)
        return 0
    }
}
