/// BOOT from the broker: run one boot task of this service now.
package struct BootTaskRun: HeaderMessage, Equatable {
    public var task: String
    public var kind: BootTask.Kind
    public var condition: BootCondition?
    public var launchOptions: JSONValue
    /// The task's deadline: the broker waits no longer, nor does a stopping service.
    package var timeoutMilliseconds: Int?

    public init(
        task: String, kind: BootTask.Kind, condition: BootCondition?, launchOptions: JSONValue,
        timeoutMilliseconds: Int? = nil
    ) {
        self.task = task
        self.kind = kind
        self.condition = condition
        self.launchOptions = launchOptions
        self.timeoutMilliseconds = timeoutMilliseconds
    }

    package static let command = Command.boot
    package static let blank = BootTaskRun(task: "", kind: .task, condition: nil, launchOptions: .emptyObject)

    package mutating func visit<Visitor: HeaderVisitor>(_ visitor: inout Visitor) throws(Visitor.Failure) {
        var wire = condition.map(BootTask.Condition.init)
        try visitor.field("condition", nullableRecord: &wire)
        condition = wire?.value
        try visitor.field("kind", &kind, default: .task)
        try visitor.field("launchOptions", any: &launchOptions, default: .emptyObject)
        // BOOT from the broker is always a run: a service reads no other.
        var operation: String? = "run"
        try visitor.field("op", &operation)
        try visitor.field("task", &task)
        try visitor.field("timeoutMs", &timeoutMilliseconds, in: BrokerRequest.timeoutRange)
    }
}
