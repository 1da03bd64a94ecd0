/// What a service tells the broker when it registers (the header of REGISTER).
package struct ServiceRegistration: Sendable, Equatable {
    /// Longest accepted service or method name, in UTF-8 bytes.
    public static let maximumNameLength = 100

    public var name: String
    /// Unique per process run; the same instance may take its name back after a reconnect.
    public var instance: String
    public var pid: Int
    public var host: String
    /// The events the service's SUB socket subscribes to.
    public var events: [EventName]
    /// The request methods the service answers.
    public var methods: [String]
    public var heartbeat: HeartbeatSettings
    /// The marker the service subscribed to on the bus after its events (see ATTACH).
    public var attachToken: String
    /// Dispatch order per event: higher first (default 0); ties by registration order.
    public var priorities: [EventName: Int]
    /// How long the service may take per dispatch step, per event, in milliseconds.
    public var deadlines: [EventName: Int]
    /// The micro-apps this process hosts.
    public var apps: [String]
    /// Started only on its first lookup or call (mPaaS lazyLoading).
    public var lazy: Bool
    /// When set, the service sees every start request first (higher priority first).
    public var interceptorPriority: Int?
    /// The boot tasks the service declares (its implicit `NAME.start` task is added by the broker).
    public var bootTasks: [BootTask]
    /// What its methods take and answer, and its custom events' fields.
    public var description = ServiceDescription()
    /// Whether this process may be one of several instances of the name (any number, on any hosts).
    public var replicable = false
    /// The methods that may be sent again to another instance when the one answering died: calling
    /// them twice does no harm.
    public var idempotent: [String] = []
    /// The events (of ``events``) each of which goes to one instance of the name only, which
    /// acknowledges it; the others go to every instance.
    public var shared: [EventName] = []
    /// The methods (of ``methods``) served by actors hosted by key: a CALL of one names a key
    /// (`cart/ana`), and the broker places each key on one instance.
    public var keyedMethods: [String] = []

    public init(
        name: String, instance: String, pid: Int, host: String, events: [EventName], methods: [String],
        heartbeat: HeartbeatSettings = .standard, attachToken: String, priorities: [EventName: Int] = [:],
        deadlines: [EventName: Int] = [:], apps: [String] = [], lazy: Bool = false,
        interceptorPriority: Int? = nil,
        bootTasks: [BootTask] = []
    ) {
        self.bootTasks = bootTasks
        self.apps = apps
        self.lazy = lazy
        self.interceptorPriority = interceptorPriority
        self.name = name
        self.instance = instance
        self.pid = pid
        self.host = host
        self.events = events
        self.methods = methods
        self.heartbeat = heartbeat
        self.attachToken = attachToken
        self.priorities = priorities
        self.deadlines = deadlines
    }

    /// The dispatch priority of this service for `event`.
    public func priority(for event: EventName) -> Int { priorities[event] ?? 0 }

    /// Checks a service or method name: 1–100 bytes of letters, digits, `_`, `-` and `.`.
    public static func nameProblem(_ name: String, what: String) -> String? {
        if name.isEmpty { return "\(what) cannot be empty" }
        if name.utf8.count > maximumNameLength { return "\(what) is at most \(maximumNameLength) bytes" }
        let allowed = name.utf8.allSatisfy { byte in
            let lower = byte | 0x20
            return (lower >= UInt8(ascii: "a") && lower <= UInt8(ascii: "z"))
                || (byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9"))
                || byte == UInt8(ascii: "_") || byte == UInt8(ascii: "-") || byte == UInt8(ascii: ".")
        }
        return allowed ? nil : "\(what) '\(name)' may contain only letters, digits, '_', '-' and '.'"
    }

    /// How this registration differs from `other`'s in what every instance of a name must share
    /// (events, methods, idempotent methods, micro-apps, priorities, deadlines, boot tasks, laziness,
    /// being replicable); nil when it does not.
    public func difference(from other: ServiceRegistration) -> String? {
        if replicable != other.replicable {
            return replicable
                ? "this process says it is one of several instances, and the name's instance does not"
                : "the name's instances say they are several (replicable), and this process does not"
        }
        let lists: [(String, [String], [String])] = [
            ("events", events.map(\.rawValue), other.events.map(\.rawValue)),
            ("methods", methods, other.methods),
            ("idempotent methods", idempotent, other.idempotent),
            ("shared events", shared.map(\.rawValue), other.shared.map(\.rawValue)),
            ("keyed actors' methods", keyedMethods, other.keyedMethods),
            ("micro-apps", apps, other.apps),
            ("boot tasks", bootTasks.map(\.name), other.bootTasks.map(\.name)),
        ]
        for (what, mine, theirs) in lists {
            if let difference = Self.difference(what, mine, theirs) { return difference }
        }
        if priorities != other.priorities { return "its dispatch priorities differ" }
        if deadlines != other.deadlines { return "its dispatch deadlines differ" }
        if lazy != other.lazy {
            return lazy ? "this one is lazy and the name's is not" : "the name's is lazy and this one is not"
        }
        if interceptorPriority != other.interceptorPriority { return "its interceptor priority differs" }
        return nil
    }

    private static func difference(_ what: String, _ mine: [String], _ theirs: [String]) -> String? {
        let extra = Set(mine).subtracting(theirs).sorted()
        let missing = Set(theirs).subtracting(mine).sorted()
        if extra.isEmpty && missing.isEmpty { return nil }
        var parts: [String] = []
        if !extra.isEmpty { parts.append("\(extra.joined(separator: ", ")) too") }
        if !missing.isEmpty { parts.append("no \(missing.joined(separator: ", "))") }
        return "its \(what) differ: this one has \(parts.joined(separator: " and "))"
    }
}

extension ServiceRegistration: WireRecord {
    /// `interceptor`: `{"priority": N}` for a service that sees every start request first.
    package struct Interceptor: WireRecord {
        var priority = 0

        package static var blank: Interceptor { Interceptor() }
        package static var recordName: String { "REGISTER 'interceptor'" }

        package mutating func visit<Visitor: HeaderVisitor>(_ visitor: inout Visitor) throws(Visitor.Failure)
        {
            try visitor.field("priority", &priority, in: -1_000_000...1_000_000)
        }
    }

    package static var blank: ServiceRegistration {
        ServiceRegistration(
            name: "", instance: "", pid: 0, host: "", events: [], methods: [], attachToken: "")
    }
    package static var recordName: String { "REGISTER" }

    package mutating func visit<Visitor: HeaderVisitor>(_ visitor: inout Visitor) throws(Visitor.Failure) {
        var resume: EventCursor?
        var holding: [String] = []
        try visit(&visitor, resume: &resume, holding: &holding)
    }

    /// The fields of a registration as the broker's record of it shows them (LOOKUP, LIST): every
    /// field but the `attach` token, which stays between the service and the broker.
    mutating func visitAsRecord<Visitor: HeaderVisitor>(_ visitor: inout Visitor) throws(Visitor.Failure) {
        var resume: EventCursor?
        var holding: [String] = []
        try visit(&visitor, resume: &resume, holding: &holding, attach: false)
    }

    /// The fields of REGISTER's header: this registration's, with a request's `resume` and
    /// `holding` among them (in sorted order); then the rules between fields, checked once all are
    /// read (a boot task, a priority or a described method names what other fields list).
    mutating func visit<Visitor: HeaderVisitor>(
        _ visitor: inout Visitor, resume: inout EventCursor?, holding: inout [String], attach: Bool = true
    ) throws(Visitor.Failure) {
        try visitor.field("apps", list: &apps)
        if attach { try visitor.field("attach", &attachToken) }
        try visitor.field("bootTasks", records: &bootTasks)
        try visitor.field("deadlines", &deadlines, in: 1...3_600_000)
        if let size = visitor.receivedSize(of: "describe"), size > ServiceDescription.maximumBytes {
            try visitor.check("'describe' is at most \(ServiceDescription.maximumBytes) bytes")
        }
        var describe = description.isEmpty ? nil : description
        try visitor.field("describe", nullableRecord: &describe)
        description = describe ?? ServiceDescription()
        var eventNames = events.map(\.rawValue)
        try visitor.field("events", list: &eventNames)
        try visitor.field("heartbeat", record: &heartbeat, default: .standard)
        try visitor.field("holding", &holding)
        try visitor.field("host", &host, default: "")
        try visitor.field("idempotent", &idempotent)
        try visitor.field("instance", &instance)
        var interceptor = interceptorPriority.map { Interceptor(priority: $0) }
        try visitor.field("interceptor", nullableRecord: &interceptor)
        interceptorPriority = interceptor?.priority
        try visitor.field("keyed", &keyedMethods)
        try visitor.field("lazy", always: &lazy, default: false)
        try visitor.field("methods", list: &methods)
        try visitor.field("name", &name)
        try visitor.field("pid", &pid, in: Int.min...Int.max, default: 0)
        try visitor.field("priorities", &priorities, in: -1_000_000...1_000_000)
        try visitor.field("replicable", &replicable, default: false)
        try visitor.field("resume", record: &resume)
        var sharedNames = shared.map(\.rawValue)
        try visitor.field("shared", &sharedNames)

        try visitor.check(Self.nameProblem(name, what: "a service name"))
        try visitor.check(
            instance.isEmpty || instance.utf8.count > 100 ? "needs a string 'instance' of 1–100 bytes" : nil)
        try visitor.check(
            attach && (attachToken.isEmpty || attachToken.utf8.count > 100)
                ? "needs a string 'attach' token of 1–100 bytes" : nil)
        try visitor.check(Self.eventsProblem(eventNames))
        events = Set(eventNames).sorted().map(EventName.init(rawValue:))
        try visitor.check(methods.lazy.compactMap { Self.nameProblem($0, what: "a method name") }.first)
        methods = Array(Set(methods)).sorted()
        try visitor.check(apps.lazy.compactMap { Self.nameProblem($0, what: "an app name") }.first)
        apps = Array(Set(apps)).sorted()
        for (field, table) in [("priorities", priorities), ("deadlines", deadlines)] {
            let stray = table.keys.map(\.rawValue).sorted().first { !eventNames.contains($0) }
            try visitor.check(stray.map { "'\(field)' names \($0), which is not in 'events'" })
        }
        for index in bootTasks.indices {
            let raw = bootTasks[index].name
            bootTasks[index].service = name
            if !raw.isEmpty && !raw.contains(".") { bootTasks[index].name = "\(name).\(raw)" }
        }
        let service = name
        try visitor.check(bootTasks.lazy.compactMap { Self.bootTaskProblem($0, of: service) }.first)
        let known = methods
        try visitor.check(description.problem(methods: known))
        try visitor.check(
            idempotent.contains { !methods.contains($0) }
                ? "'idempotent' must name methods listed in 'methods'" : nil)
        idempotent = Array(Set(idempotent)).sorted()
        try visitor.check(
            sharedNames.contains { !eventNames.contains($0) }
                ? "'shared' must name events listed in 'events'" : nil)
        shared = Set(sharedNames).sorted().map(EventName.init(rawValue:))
        try visitor.check(
            keyedMethods.contains { !methods.contains($0) }
                ? "'keyed' must name methods listed in 'methods'" : nil)
        keyedMethods = Array(Set(keyedMethods)).sorted()
    }

    /// What is wrong with the event names a service subscribes to (each must be a catalog event or
    /// a custom one with a namespace), nil when nothing.
    private static func eventsProblem(_ names: [String]) -> String? {
        for name in names {
            do { _ = try EventCatalog.validateName(name) } catch { return error.message }
        }
        return nil
    }

    /// What is wrong with a boot task this service declares, nil when nothing.
    private static func bootTaskProblem(_ task: BootTask, of name: String) -> String? {
        if task.name.isEmpty { return "'bootTasks': a boot task needs a 'name'" }
        if let problem = nameProblem(task.name, what: "a boot task name") { return problem }
        if !task.name.hasPrefix(name + ".") || task.name.count == name.count + 1 {
            return "'bootTasks': boot task \(task.name) of \(name) must be named \(name).something"
        }
        if task.kind == .launcher {
            return "'bootTasks': boot task \(task.name): only the broker has launcher tasks"
        }
        return nil
    }
}
