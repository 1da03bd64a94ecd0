import Lifeline
import LifelineProtocol
import LifelineSupport

/// `lifeline describe SERVICE`.
enum DescribeCommand: CLICommand {
    static let name = "describe"
    static let summary = "what a service answers and handles: methods with their shapes, events, apps"
    static let usage = """
        usage: lifeline describe SERVICE [options]

        Prints what SERVICE registered: each method (with the one line, argument and reply shape
        the service gave for it), the events it subscribes to (with the fields of the custom
        events it describes), the micro-apps it hosts and its boot tasks.
        """
    static let options = ClientOptions.options(timeout: "the service's record (default 5s)")

    static func run(_ arguments: inout CommandLineArguments) throws -> Int32 {
        let options = try ClientOptions(&arguments)
        guard let service = arguments.positional() else { throw UsageError("describe needs a SERVICE") }
        try arguments.finish()
        let client = try options.client()
        let record: ServiceRecord
        do {
            record = try client.lookup(service, timeout: options.timeout)
        } catch let error as LifelineError where error.status == .notFound {
            let names = (try? client.services(timeout: options.timeout).map(\.name)) ?? []
            throw LifelineError(
                .notFound,
                "no service named '\(service)'\(Suggestion.phrase(for: service, in: names)) (registered: \(names.isEmpty ? "none" : names.sorted().joined(separator: ", ")))"
            )
        }
        let registration = record.registration
        if options.json {
            Console.out(registration.json.description)
            return 0
        }
        let described = registration.description
        Console.out("\(registration.name) (pid \(registration.pid) on \(registration.host))")
        Console.out("methods:")
        if registration.methods.isEmpty { Console.out("  (none)") }
        for method in registration.methods {
            if let about = described.methods[method] {
                let shape = [
                    about.arguments.isEmpty ? nil : "takes \(about.arguments)",
                    about.reply.isEmpty ? nil : "answers \(about.reply)",
                ].compactMap { $0 }.joined(separator: ", ")
                let summary = about.summary.isEmpty ? "" : " — \(about.summary)"
                Console.out("  \(method)\(summary)\(shape.isEmpty ? "" : " (\(shape))")")
            } else {
                Console.out("  \(method)")
            }
        }
        Console.out("events:")
        if registration.events.isEmpty && described.events.isEmpty { Console.out("  (none)") }
        let events = Set(registration.events.map(\.rawValue)).union(described.events.keys).sorted()
        for event in events {
            let handled = registration.events.contains(EventName(rawValue: event)) ? "handles" : "publishes"
            if let about = described.events[event] {
                let fields = about.fields.sorted { $0.key < $1.key }.map { "\($0.key): \($0.value)" }
                    .joined(separator: ", ")
                let summary = about.summary.isEmpty ? "" : " — \(about.summary)"
                Console.out("  \(event) (\(handled))\(summary)\(fields.isEmpty ? "" : " {\(fields)}")")
            } else {
                Console.out("  \(event) (\(handled))")
            }
        }
        if !registration.apps.isEmpty { Console.out("apps: \(registration.apps.joined(separator: ", "))") }
        if !registration.bootTasks.isEmpty {
            Console.out("boot tasks: \(registration.bootTasks.map(\.name).joined(separator: ", "))")
        }
        return 0
    }
}
