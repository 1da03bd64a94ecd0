/// BOOT from a client: an operation of the boot loader (section 9 of docs/PROTOCOL.md).
package enum BootRequest: Sendable, Equatable {
    /// The last boot: blame, critical chain, tasks.
    case report
    /// Start a boot with these launch options.
    case start(launchOptions: JSONValue)
    /// Run one task now (executeTaskWithName).
    case run(task: String)

    /// Reads a client's BOOT header.
    /// - Throws: ``ProtocolError`` (400) naming the operation and what was wrong.
    init(_ fields: HeaderFields) throws(ProtocolError) {
        let header = try BootHeader(fields)
        switch header.op ?? "" {
        case "report": self = .report
        case "start": self = .start(launchOptions: header.launchOptions ?? .emptyObject)
        case "run":
            guard let task = header.task else { throw fields.problem("BOOT run needs a string 'task'") }
            self = .run(task: task)
        default: throw fields.problem("BOOT op must be report, start or run")
        }
    }

    /// The header of this operation.
    var header: BootHeader {
        switch self {
        case .report: BootHeader(op: "report")
        case .start(let options): BootHeader(launchOptions: options, op: "start")
        case .run(let task): BootHeader(op: "run", task: task)
        }
    }
}

/// A client's BOOT header, declared once: the operation, and its launch options or task.
struct BootHeader: HeaderMessage, Equatable {
    var launchOptions: JSONValue?
    var op: String?
    var task: String?

    static let command = Command.boot
    static let blank = BootHeader()

    mutating func visit<Visitor: HeaderVisitor>(_ visitor: inout Visitor) throws(Visitor.Failure) {
        try visitor.field("launchOptions", object: &launchOptions)
        try visitor.field("op", &op)
        try visitor.field("task", tolerant: &task)
    }
}
