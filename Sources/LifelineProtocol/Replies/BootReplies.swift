/// The BOOT replies to a client (docs/PROTOCOL.md §8), declared once: what the broker writes and a
/// client reads.
package enum BootReplies {
    /// The report of the last boot: its state, options, phases and, once its tasks are known, each
    /// task's fate, the slowest first (`blame`) and the chain that set its length (`criticalChain`).
    package struct Report: WireRecord, Equatable {
        package var blame: [String]?
        package var boot: Int64
        package var criticalChain: [String]?
        package var durationMilliseconds: Int?
        package var error: String?
        package var launchOptions: JSONValue
        package var missing: [String]
        package var phases: [String]
        /// The last boot of an earlier life of the broker (read back from its state directory), not
        /// one this broker ran.
        package var restored: Bool?
        package var startedAt: Int64
        package var state: String
        package var tasks: [Task]?

        package init(
            boot: Int64, state: String, launchOptions: JSONValue, phases: [String], missing: [String],
            startedAt: Int64
        ) {
            self.boot = boot
            self.state = state
            self.launchOptions = launchOptions
            self.phases = phases
            self.missing = missing
            self.startedAt = startedAt
        }

        package static var blank: Self {
            Self(boot: 0, state: "", launchOptions: .emptyObject, phases: [], missing: [], startedAt: 0)
        }
        package static var recordName: String { "the BOOT report" }

        package mutating func visit<Visitor: HeaderVisitor>(_ visitor: inout Visitor) throws(Visitor.Failure)
        {
            try visitor.field("blame", optionalList: &blame)
            try visitor.field("boot", &boot, default: 0)
            try visitor.field("criticalChain", optionalList: &criticalChain)
            try visitor.field("durationMs", &durationMilliseconds, in: 0...Int.max)
            try visitor.field("error", &error)
            try visitor.field("launchOptions", any: &launchOptions, default: .emptyObject)
            try visitor.field("missing", list: &missing)
            try visitor.field("phases", list: &phases)
            try visitor.field("restored", &restored)
            try visitor.field("startedAt", &startedAt, default: 0)
            try visitor.field("state", &state)
            try visitor.field("tasks", optionalRecords: &tasks)
        }

        /// One task of the report: what it is, and what became of it in this boot.
        package struct Task: WireRecord, Equatable {
            package var after: [String] = []
            package var isAsynchronous = false
            package var durationMilliseconds: Int64?
            package var kind = ""
            package var name = ""
            package var phase = ""
            package var priority = 0
            package var reason: String?
            package var isRequired = false
            package var runsOnce = false
            package var service = ""
            package var startMilliseconds: Int64?
            package var state = ""

            package init() {}

            package static var blank: Self { Self() }
            package static var recordName: String { "a task of the BOOT report" }

            package mutating func visit<Visitor: HeaderVisitor>(_ visitor: inout Visitor)
                throws(Visitor.Failure)
            {
                try visitor.field("after", list: &after)
                try visitor.field("async", always: &isAsynchronous, default: false)
                try visitor.field("durationMs", nullable: &durationMilliseconds)
                try visitor.field("kind", &kind)
                try visitor.field("name", &name)
                try visitor.field("phase", &phase)
                try visitor.field("priority", &priority, in: Int.min...Int.max, default: 0)
                try visitor.field("reason", nullable: &reason)
                try visitor.field("required", always: &isRequired, default: false)
                try visitor.field("runOnce", always: &runsOnce, default: false)
                try visitor.field("service", &service)
                try visitor.field("startMs", nullable: &startMilliseconds)
                try visitor.field("state", &state)
            }
        }
    }

    /// The report before any boot: `state` `none`, the phases and the tasks a boot would run.
    package struct NotStarted: WireRecord, Equatable {
        package var phases: [String]
        package var planned: [BootTask]
        package var state = "none"

        package init(phases: [String], planned: [BootTask]) {
            self.phases = phases
            self.planned = planned
        }

        package static var blank: Self { Self(phases: [], planned: []) }
        package static var recordName: String { "the BOOT report before a boot" }

        package mutating func visit<Visitor: HeaderVisitor>(_ visitor: inout Visitor) throws(Visitor.Failure)
        {
            try visitor.field("phases", list: &phases)
            try visitor.field("planned", records: &planned)
            try visitor.field("state", &state)
        }
    }

    /// A boot started: its number and state.
    package struct Started: WireRecord, Equatable {
        package var boot: Int64
        package var state: String

        package init(boot: Int64, state: String) {
            self.boot = boot
            self.state = state
        }

        package static var blank: Self { Self(boot: 0, state: "") }
        package static var recordName: String { "the BOOT start reply" }

        package mutating func visit<Visitor: HeaderVisitor>(_ visitor: inout Visitor) throws(Visitor.Failure)
        {
            try visitor.field("boot", &boot, default: 0)
            try visitor.field("state", &state)
        }
    }

    /// One task run on demand: `done`, `skipped` or `failed`, and why (null when done).
    package struct TaskRun: WireRecord, Equatable {
        package var outcome: String
        package var reason: String?
        package var task: String

        package init(task: String, outcome: String, reason: String?) {
            self.task = task
            self.outcome = outcome
            self.reason = reason
        }

        package static var blank: Self { Self(task: "", outcome: "", reason: nil) }
        package static var recordName: String { "the BOOT run reply" }

        package mutating func visit<Visitor: HeaderVisitor>(_ visitor: inout Visitor) throws(Visitor.Failure)
        {
            try visitor.field("outcome", &outcome)
            try visitor.field("reason", nullable: &reason)
            try visitor.field("task", &task)
        }
    }
}
