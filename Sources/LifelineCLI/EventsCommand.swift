import Foundation
import Lifeline
import LifelineProtocol
import LifelineSupport

/// `lifeline events`.
enum EventsCommand: CLICommand {
    static let name = "events"
    static let summary = "list the built-in lifecycle events and their payload fields"
    static let usage = """
        usage: lifeline events [--json] [--broker EP]

        Custom events are allowed too: any name with a namespace, e.g. com.example.cartDidChange
        (segments of letters, digits, '_' and '-', separated by dots, at most 200 bytes). With
        --broker (or LIFELINE_BROKER set) the custom events of the registered services follow, with
        the fields they describe.
        """
    static let options = [
        ClientOptions.json,
        ClientOptions.broker.helping(
            "also list the custom events of the services registered there (default: $LIFELINE_BROKER when set)"
        ),
    ]

    static func run(_ arguments: inout CommandLineArguments) throws -> Int32 {
        let json = arguments.flag(ClientOptions.json)
        let broker =
            try arguments.option(ClientOptions.broker)
            ?? ProcessInfo.processInfo.environment["LIFELINE_BROKER"].flatMap { $0.isEmpty ? nil : $0 }
        try arguments.finish()
        // The custom events the registered services handle or describe: event → [(service, summary, fields)].
        var custom: [String: [(service: String, about: ServiceDescription.Event?)]] = [:]
        if let broker {
            if let problem = ClientOptions.endpointProblem(broker) {
                throw UsageError("--broker: \(problem)")
            }
            for record in try BlockingClient(broker: broker).services() {
                let registration = record.registration
                let names = Set(registration.events.filter(\.isCustom).map(\.rawValue))
                    .union(registration.description.events.keys)
                for name in names {
                    custom[name, default: []].append(
                        (registration.name, registration.description.events[name]))
                }
            }
        }
        if json {
            let list: [JSONValue] = EventCatalog.all.map { descriptor in
                [
                    "name": .string(descriptor.name.rawValue), "origin": .string(descriptor.origin.rawValue),
                    "counterpart": .string(descriptor.counterpart),
                    "fields": .array(
                        descriptor.fields.map {
                            [
                                "name": .string($0.name), "type": .string($0.kind.rawValue),
                                "required": .bool($0.isRequired),
                            ]
                        }),
                ]
            }
            Console.out(JSONValue.array(list).description)
            return 0
        }
        let rows = EventCatalog.all.map { descriptor in
            [
                descriptor.name.rawValue, descriptor.origin == .runtime ? "broker" : "app",
                descriptor.fields.isEmpty
                    ? "-"
                    : descriptor.fields.map { "\($0.name)\($0.isRequired ? "" : "?"):\($0.kind.rawValue)" }
                        .joined(separator: " "),
            ]
        }
        Console.out(TextFormat.table(["EVENT", "FROM", "FIELDS (? = optional)"], rows))
        if broker != nil {
            Console.out("")
            if custom.isEmpty { Console.out("no registered service handles or describes a custom event") }
            let customRows = custom.keys.sorted().map { name -> [String] in
                let entries = custom[name] ?? []
                let about = entries.compactMap(\.about).first
                let fields = about?.fields.sorted { $0.key < $1.key }.map { "\($0.key):\($0.value)" }
                    .joined(separator: " ")
                return [
                    name, entries.map(\.service).sorted().joined(separator: ","),
                    (fields?.isEmpty ?? true ? "-" : fields ?? "-")
                        + (about.map { " — \($0.summary)" } ?? ""),
                ]
            }
            if !customRows.isEmpty {
                Console.out(TextFormat.table(["CUSTOM EVENT", "SERVICES", "FIELDS"], customRows))
            }
        }
        return 0
    }
}
