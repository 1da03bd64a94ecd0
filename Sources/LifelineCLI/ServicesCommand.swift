import Lifeline
import LifelineProtocol
import LifelineSupport

/// `lifeline services`.
enum ServicesCommand: CLICommand {
    static let name = "services"
    static let summary = "list the registered services"
    static let usage = """
        usage: lifeline services [--wide] [--instances] [options]

        Prints one row per registered service: name, how many instances serve it, pid and host (of
        its first instance), the events it subscribes to, the methods it answers, how long it has
        been registered and when it last heartbeated. Long event and method lists are cut to fit
        100 columns ('…+N', N more); --wide shows them all. --instances prints one row per instance
        instead: name, instance id (its first 12 characters; --wide: whole, as 'lifeline actors'
        prints it), pid, host, calls in flight, connected, uptime, last heartbeat.
        """
    static let wide = CommandLineOption.flag(
        "--wide", help: "show every event and method, however wide the table")
    static let instances = CommandLineOption.flag(
        "--instances", help: "one row per instance of each service (replicas)")
    static let options = [wide, instances] + ClientOptions.options(timeout: "the registry (default 5s)")

    static func run(_ arguments: inout CommandLineArguments) throws -> Int32 {
        let options = try ClientOptions(&arguments)
        let wide = arguments.flag(Self.wide)
        let perInstance = arguments.flag(Self.instances)
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
        if perInstance {
            Console.out(instanceTable(records, wide: wide))
            return 0
        }
        // Long lists are cut to fit a 100-column terminal: '…+N' says how many more (--wide: all).
        func list(_ items: [String], width: Int) -> String {
            guard !items.isEmpty else { return "-" }
            let whole = items.joined(separator: ",")
            guard !wide, whole.count > width else { return whole }
            var shown: [String] = []
            for item in items {
                let candidate = (shown + [item]).joined(separator: ",")
                if candidate.count + 4 > width { break }
                shown.append(item)
            }
            if shown.isEmpty { return String(items[0].prefix(width - 5)) + "…+\(items.count - 1)" }
            return shown.joined(separator: ",") + ",…+\(items.count - shown.count)"
        }
        let rows = records.map { record in
            [
                record.name, String(max(1, record.instances.count)), String(record.registration.pid),
                record.registration.host,
                list(record.registration.events.map(\.rawValue), width: 24),
                list(record.registration.methods, width: 16),
                TextFormat.duration(milliseconds: record.uptimeMilliseconds),
                TextFormat.duration(milliseconds: record.lastSeenMillisecondsAgo) + " ago",
                String(record.dropped),
            ]
        }
        Console.out(
            TextFormat.table(
                ["NAME", "INST", "PID", "HOST", "EVENTS", "METHODS", "UPTIME", "LAST HEARTBEAT", "DROPPED"],
                rows))
        return 0
    }

    /// One row per instance: a service of one process is its own only instance. Instance ids are
    /// cut to 12 characters, whole with `wide` (as `lifeline actors` prints them).
    static func instanceTable(_ records: [ServiceRecord], wide: Bool) -> String {
        var rows: [[String]] = []
        for record in records {
            guard !record.instances.isEmpty else {
                rows.append([
                    record.name, "-", String(record.pid), record.host, "-", "yes",
                    TextFormat.duration(milliseconds: record.uptimeMilliseconds),
                    TextFormat.duration(milliseconds: record.lastSeenMillisecondsAgo) + " ago",
                ])
                continue
            }
            for instance in record.instances {
                rows.append([
                    record.name, wide ? instance.instance : String(instance.instance.prefix(12)),
                    String(instance.pid),
                    instance.host,
                    String(instance.inFlight), instance.connected ? "yes" : "no",
                    TextFormat.duration(
                        milliseconds: max(
                            0,
                            record.registeredAtMilliseconds + record.uptimeMilliseconds
                                - instance.registeredAtMilliseconds)),
                    TextFormat.duration(milliseconds: instance.lastSeenMillisecondsAgo) + " ago",
                ])
            }
        }
        return TextFormat.table(
            ["NAME", "INSTANCE", "PID", "HOST", "IN FLIGHT", "CONNECTED", "UPTIME", "LAST HEARTBEAT"], rows)
    }
}
