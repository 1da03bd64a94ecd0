/// BOOT from a client: an operation of the boot loader (section 9 of docs/PROTOCOL.md).
package enum BootRequest: Sendable, Equatable {
    /// The last boot: blame, critical chain, tasks.
    case report
    /// Start a boot with these launch options.
    case start(launchOptions: JSONValue)
    /// Run one task now (executeTaskWithName).
    case run(task: String)

    init(_ fields: HeaderFields) throws(ProtocolError) {
        switch try fields.optionalString("op") ?? "" {
        case "report": self = .report
        case "start": self = .start(launchOptions: fields.value("launchOptions") ?? .emptyObject)
        case "run":
            guard let task = fields.value("task")?.stringValue else {
                throw fields.problem("BOOT run needs a string 'task'")
            }
            self = .run(task: task)
        default: throw fields.problem("BOOT op must be report, start or run")
        }
    }

    var json: JSONValue {
        switch self {
        case .report: ["op": "report"]
        case .start(let options): ["op": "start", "launchOptions": options]
        case .run(let task): ["op": "run", "task": .string(task)]
        }
    }
}
