/// BOOT from the broker: run one boot task of this service now.
package struct BootTaskRun: Sendable, Equatable {
    public var task: String
    public var kind: BootTask.Kind
    public var condition: BootCondition?
    public var launchOptions: JSONValue

    public init(task: String, kind: BootTask.Kind, condition: BootCondition?, launchOptions: JSONValue) {
        self.task = task
        self.kind = kind
        self.condition = condition
        self.launchOptions = launchOptions
    }

    init(_ fields: HeaderFields) throws(ProtocolError) {
        task = try fields.string("task")
        let kindName = try fields.optionalString("kind") ?? "task"
        guard let kind = BootTask.Kind(rawValue: kindName) else {
            throw fields.problem("BOOT kind must be task or start, not '\(kindName)'")
        }
        self.kind = kind
        condition = fields.value("condition").flatMap(BootCondition.init(json:))
        launchOptions = fields.value("launchOptions") ?? .emptyObject
    }

    var header: JSONValue {
        [
            "op": "run", "task": .string(task), "kind": .string(kind.rawValue),
            "condition": condition?.json ?? .null, "launchOptions": launchOptions,
        ]
    }
}
