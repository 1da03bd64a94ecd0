/// When a boot task may run (MPIBootTask canExecute).
public enum BootCondition: Sendable, Equatable {
    /// The launch options of didFinishLaunching have this key (checked by the broker).
    case launchOption(String)
    /// The task's process has this environment variable (set, or equal to `value`).
    case environment(String, equals: String?)
    /// The service's own check decides (asked when the task would run).
    case check

    package var json: JSONValue {
        switch self {
        case .launchOption(let key): ["launchOption": .string(key)]
        case .environment(let name, let value):
            ["env": .string(name), "equals": value.map { .string($0) } ?? .null]
        case .check: ["check": true]
        }
    }

    public init?(json: JSONValue) {
        if let key = json["launchOption"]?.stringValue {
            self = .launchOption(key)
        } else if let name = json["env"]?.stringValue {
            self = .environment(name, equals: json["equals"]?.stringValue)
        } else if json["check"]?.boolValue == true {
            self = .check
        } else {
            return nil
        }
    }

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

    package var json: JSONValue {
        [
            "name": .string(name), "service": .string(service), "kind": .string(kind.rawValue),
            "phase": .string(phase),
            "priority": .int(Int64(priority)), "async": .bool(isAsynchronous),
            "after": .array(after.map { .string($0) }),
            "condition": condition?.json ?? .null, "deadlineMs": .int(Int64(deadlineMilliseconds)),
            "required": .bool(isRequired),
            "runOnce": .bool(runsOnce),
        ]
    }

    /// Reads a task declared by `service` (names without a dot get the service's prefix).
    package init(json: JSONValue, service: String) throws(ProtocolError) {
        guard let raw = json["name"]?.stringValue, !raw.isEmpty else {
            throw ProtocolError(.badRequest, "a boot task needs a 'name'")
        }
        let name = raw.contains(".") ? raw : "\(service).\(raw)"
        if let problem = ServiceRegistration.nameProblem(name, what: "a boot task name") {
            throw ProtocolError(.badRequest, problem)
        }
        var task = BootTask(name: name, service: service)
        try task.apply(json)
        self = task
    }

    /// Applies the fields present in `json` (a declaration, or a topology override).
    public mutating func apply(_ json: JSONValue) throws(ProtocolError) {
        if let kind = json["kind"]?.stringValue {
            guard let parsed = Kind(rawValue: kind) else {
                throw ProtocolError(.badRequest, "boot task \(name): unknown kind '\(kind)'")
            }
            self.kind = parsed
        }
        if let phase = json["phase"]?.stringValue { self.phase = phase }
        if let priority = json["priority"]?.intValue { self.priority = Int(priority) }
        if let async = json["async"]?.boolValue { isAsynchronous = async }
        if let after = json["after"]?.arrayValue {
            self.after = try after.map { (value) throws(ProtocolError) -> String in
                guard let text = value.stringValue else {
                    throw ProtocolError(.badRequest, "boot task \(name): 'after' must list task names")
                }
                return text
            }
        }
        if let condition = json["condition"] {
            if condition == .null {
                self.condition = nil
            } else {
                guard let parsed = BootCondition(json: condition) else {
                    throw ProtocolError(
                        .badRequest,
                        "boot task \(name): 'condition' is {\"launchOption\": key}, {\"env\": NAME, \"equals\": value} or {\"check\": true}"
                    )
                }
                self.condition = parsed
            }
        }
        if let deadline = json["deadlineMs"]?.intValue {
            guard (1...3_600_000).contains(deadline) else {
                throw ProtocolError(.badRequest, "boot task \(name): deadlineMs must be within 1...3600000")
            }
            deadlineMilliseconds = Int(deadline)
        }
        if let required = json["required"]?.boolValue { isRequired = required }
        if let once = json["runOnce"]?.boolValue { runsOnce = once }
    }
}
