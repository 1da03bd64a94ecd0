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
        var unreachable: String?
        if let broker {
            if let problem = Endpoint.problem(inList: broker) {
                throw UsageError("--broker: \(problem)")
            }
            do {
                for record in try BlockingClient(broker: broker).services() {
                    let registration = record.registration
                    let names = Set(registration.events.filter(\.isCustom).map(\.rawValue))
                        .union(registration.description.events.keys)
                    for name in names {
                        custom[name, default: []].append(
                            (registration.name, registration.description.events[name]))
                    }
                }
            } catch let error as LifelineError where error.status == .unavailable || error.status == .timeout
            {
                // The built-in events are known without a broker: they are listed, and the rest said.
                unreachable = error.message
                Console.error("lifeline events: the custom events are not listed: \(error.message)")
            }
        }
        if json {
            Console.out(JSONValue.array(Self.builtInJSON + Self.customJSON(custom)).description)
            return unreachable == nil ? 0 : 1
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
        if unreachable != nil { return 1 }
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

    /// The built-in events as `--json` lists them: each one's fields and rules.
    static var builtInJSON: [JSONValue] {
        EventCatalog.all.map { descriptor in
            var entry: [String: JSONValue] = [
                "name": .string(descriptor.name.rawValue), "origin": .string(descriptor.origin.rawValue),
                "counterpart": .string(descriptor.counterpart),
                "fields": .array(
                    descriptor.fields.map {
                        [
                            "name": .string($0.name), "type": .string($0.kind.rawValue),
                            "required": .bool($0.isRequired),
                        ]
                    }),
                "acknowledged": .bool(descriptor.requiresAcknowledgement),
            ]
            if let value = descriptor.defaultReturn { entry["defaultReturn"] = .bool(value) }
            if let rule = descriptor.completion { entry["completion"] = .string(rule.rawValue) }
            if let deadline = descriptor.deadlineMilliseconds { entry["deadlineMs"] = .int(Int64(deadline)) }
            return .object(entry)
        }
    }

    /// The custom events of the registered services as `--json` lists them: `origin` `custom`, the
    /// services that handle or describe each, and the fields they describe.
    static func customJSON(_ custom: [String: [(service: String, about: ServiceDescription.Event?)]])
        -> [JSONValue]
    {
        custom.keys.sorted().map { name in
            let entries = custom[name] ?? []
            let about = entries.compactMap(\.about).first
            var entry: [String: JSONValue] = [
                "name": .string(name), "origin": "custom",
                "services": .array(entries.map(\.service).sorted().map { .string($0) }),
                "fields": .array(
                    (about?.fields ?? [:]).sorted { $0.key < $1.key }.map {
                        ["name": .string($0.key), "type": .string($0.value)]
                    }),
            ]
            if let summary = about?.summary { entry["summary"] = .string(summary) }
            return .object(entry)
        }
    }
}
