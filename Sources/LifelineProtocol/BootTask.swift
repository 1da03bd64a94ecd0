/// When a boot task may run (MPIBootTask canExecute).
public enum BootCondition: Sendable, Equatable {
    /// The launch options of didFinishLaunching have this key (checked by the broker).
    case launchOption(String)
    /// The task's process has this environment variable (set, or equal to `value`).
    case environment(String, equals: String?)
    /// The service's own check decides (asked when the task would run).
    case check

    public var description: String {
        switch self {
        case .launchOption(let key): "launch option '\(key)'"
        case .environment(let name, let value):
            value.map { "environment \(name)=\($0)" } ?? "environment \(name)"
        case .check: "the service's own check"
        }
    }
}

/// One step of start-up (mPaaS's MPIBootTask): it says *when* something happens — usually a service's
/// start — not what lives on. Each runs at most once per boot.
package struct BootTask: Sendable, Equatable {
    /// What running the task means.
    public enum Kind: String, Sendable, CaseIterable {
        /// The service's start hook (DTService start).
        case start
        /// A task the service declared with its own body.
        case task
        /// Starting the Launcher micro-app (the broker's own).
        case launcher
    }

    /// `service.task`, unique in the system.
    public var name: String
    public var service: String
    public var kind: Kind
    public var phase: String
    /// Higher runs earlier within a phase.
    public var priority: Int
    /// Runs concurrently with other asynchronous tasks; synchronous ones run one at a time.
    public var isAsynchronous: Bool
    /// Tasks (in this or earlier phases, any process) that must have run first.
    public var after: [String]
    public var condition: BootCondition?
    public var deadlineMilliseconds: Int
    /// When it fails, the boot stops.
    public var isRequired: Bool
    /// Runs once ever (remembered in the broker's state directory), like mPaaS's RunOnceServices.
    public var runsOnce: Bool

    /// The default phases, in order (mPaaS: setup, run-once services, non-lazy services, autostart
    /// groups, launcher).
    public static let defaultPhases = ["setup", "runOnce", "services", "autostart", "launcher"]
    public static let defaultDeadlineMilliseconds = 10_000

    public init(
        name: String, service: String, kind: Kind = .task, phase: String = "services", priority: Int = 0,
        isAsynchronous: Bool = false,
        after: [String] = [], condition: BootCondition? = nil,
        deadlineMilliseconds: Int = BootTask.defaultDeadlineMilliseconds,
        isRequired: Bool = false, runsOnce: Bool = false
    ) {
        self.name = name
        self.service = service
        self.kind = kind
        self.phase = phase
        self.priority = priority
        self.isAsynchronous = isAsynchronous
        self.after = after
        self.condition = condition
        self.deadlineMilliseconds = deadlineMilliseconds
        self.isRequired = isRequired
        self.runsOnce = runsOnce
    }

    /// Applies the fields present in `json` (a declaration, or a topology override): the task's own
    /// fields with those of `json` in their place, read through the task's one declaration, so an
    /// override is checked as a registration's task is. Its name and service stay.
    /// - Throws: ``ProtocolError`` (400) naming the task and the field when `json` is not an object
    ///   or a field is not what it must be.
    public mutating func apply(_ json: JSONValue) throws(ProtocolError) {
        guard case .object(let override) = json, case .object(var fields) = self.json else {
            throw ProtocolError(.badRequest, "boot task \(name): an override is a JSON object")
        }
        for (key, value) in override { fields[key] = value }
        var updated: BootTask
        do {
            updated = try BootTask(json: .object(fields))
        } catch {
            throw ProtocolError(.badRequest, "boot task \(name): \(error.message)")
        }
        (updated.name, updated.service) = (name, service)
        self = updated
    }
}

extension BootTask: WireRecord {
    /// A task's condition on the wire: one of `{"launchOption": key}`, `{"env": NAME, "equals":
    /// value or null}` and `{"check": true}`.
    package struct Condition: WireRecord, Equatable {
        package var value: BootCondition?

        package init(_ value: BootCondition?) { self.value = value }

        package static var blank: Condition { Condition(nil) }
        package static var recordName: String { "'condition'" }

        package mutating func visit<Visitor: HeaderVisitor>(_ visitor: inout Visitor) throws(Visitor.Failure)
        {
            var check: Bool? = value == .check ? true : nil
            try visitor.field("check", &check)
            var environment: String?
            var equals: String?
            if case .environment(let name, let wanted) = value { (environment, equals) = (name, wanted) }
            try visitor.field("env", &environment)
            if environment != nil { try visitor.field("equals", nullable: &equals) }
            var launchOption: String?
            if case .launchOption(let key) = value { launchOption = key }
            try visitor.field("launchOption", &launchOption)
            value =
                if let launchOption { .launchOption(launchOption) } else if let environment {
                    .environment(environment, equals: equals)
                } else if check == true { .check } else { nil }
            try visitor.check(
                value == nil
                    ? #"is {"launchOption": key}, {"env": NAME, "equals": value} or {"check": true}"# : nil)
        }
    }

    package static var blank: BootTask { BootTask(name: "", service: "") }
    package static var recordName: String { "a boot task" }

    package mutating func visit<Visitor: HeaderVisitor>(_ visitor: inout Visitor) throws(Visitor.Failure) {
        try visitor.field("after", list: &after)
        try visitor.field("async", always: &isAsynchronous, default: false)
        var wire = condition.map(Condition.init)
        try visitor.field("condition", nullableRecord: &wire)
        condition = wire?.value
        try visitor.field(
            "deadlineMs", &deadlineMilliseconds, in: 1...3_600_000, default: Self.defaultDeadlineMilliseconds)
        try visitor.field("kind", &kind, default: .task)
        try visitor.field("name", &name)
        try visitor.field("phase", &phase, default: "services")
        try visitor.field("priority", &priority, in: Int.min...Int.max, default: 0)
        try visitor.field("required", always: &isRequired, default: false)
        try visitor.field("runOnce", always: &runsOnce, default: false)
        // The declaring service's name (a REGISTER's tasks take the registration's).
        try visitor.field("service", &service, default: "")
    }
}
