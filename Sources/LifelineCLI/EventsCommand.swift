import Lifeline
import LifelineProtocol
import LifelineSupport

/// `lifeline events`.
enum EventsCommand: CLICommand {
    static let name = "events"
    static let summary = "list the built-in lifecycle events and their payload fields"
    static let help = """
        usage: lifeline events [--json]

        Custom events are allowed too: any name with a namespace, e.g. com.example.cartDidChange
        (segments of letters, digits, '_' and '-', separated by dots, at most 200 bytes).
        """

    static func run(_ arguments: inout CommandLineArguments) throws -> Int32 {
        let json = arguments.flag("--json")
        try arguments.finish()
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
        return 0
    }
}
