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

    public var json: JSONValue {
        var members: [String: JSONValue] = [
            "name": .string(name), "instance": .string(instance), "pid": .int(Int64(pid)),
            "host": .string(host),
            "events": .array(events.map { .string($0.rawValue) }),
            "methods": .array(methods.map { .string($0) }),
            "heartbeat": heartbeat.json, "attach": .string(attachToken),
            "priorities": .object(
                Dictionary(uniqueKeysWithValues: priorities.map { ($0.key.rawValue, .int(Int64($0.value))) })),
            "deadlines": .object(
                Dictionary(uniqueKeysWithValues: deadlines.map { ($0.key.rawValue, .int(Int64($0.value))) })),
            "apps": .array(apps.map { .string($0) }), "lazy": .bool(lazy),
            "interceptor": interceptorPriority.map { ["priority": .int(Int64($0))] } ?? .null,
            "bootTasks": .array(bootTasks.map(\.json)),
            "describe": description.isEmpty ? .null : description.json,
        ]
        // Left out when unset, so a single-instance service's messages are as they always were.
        if replicable { members["replicable"] = true }
        if !idempotent.isEmpty { members["idempotent"] = .array(idempotent.map { .string($0) }) }
        if !shared.isEmpty { members["shared"] = .array(shared.map { .string($0.rawValue) }) }
        if !keyedMethods.isEmpty { members["keyed"] = .array(keyedMethods.map { .string($0) }) }
        return .object(members)
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

    private static func perEvent(
        _ json: JSONValue?, _ field: String, events: [EventName], range: ClosedRange<Int>
    ) throws(ProtocolError) -> [EventName: Int] {
        var result: [EventName: Int] = [:]
        for (key, value) in json?.objectValue ?? [:] {
            let name = EventName(rawValue: key)
            guard events.contains(name) else {
                throw ProtocolError(.badRequest, "REGISTER '\(field)' names \(key), which is not in 'events'")
            }
            guard let number = value.intValue, range.contains(Int(number)) else {
                throw ProtocolError(
                    .badRequest, "REGISTER '\(field).\(key)' must be an integer within \(range)")
            }
            result[name] = Int(number)
        }
        return result
    }

    /// Reads and checks a REGISTER header.
    public init(json: JSONValue) throws(ProtocolError) {
        guard let name = json["name"]?.stringValue else {
            throw ProtocolError(.badRequest, "REGISTER needs a string 'name'")
        }
        if let problem = ServiceRegistration.nameProblem(name, what: "a service name") {
            throw ProtocolError(.badRequest, problem)
        }
        guard let instance = json["instance"]?.stringValue, !instance.isEmpty, instance.utf8.count <= 100
        else {
            throw ProtocolError(.badRequest, "REGISTER needs a string 'instance' of 1–100 bytes")
        }
        guard let attach = json["attach"]?.stringValue, !attach.isEmpty, attach.utf8.count <= 100 else {
            throw ProtocolError(.badRequest, "REGISTER needs a string 'attach' token of 1–100 bytes")
        }
        let pid = Int(json["pid"]?.intValue ?? 0)
        let host = json["host"]?.stringValue ?? ""
        var events: [EventName] = []
        for value in json["events"]?.arrayValue ?? [] {
            guard let text = value.stringValue else {
                throw ProtocolError(.badRequest, "REGISTER 'events' must be strings")
            }
            do {
                events.append(try EventCatalog.validateName(text))
            } catch {
                throw ProtocolError(.badRequest, error.message)
            }
        }
        var methods: [String] = []
        for value in json["methods"]?.arrayValue ?? [] {
            guard let method = value.stringValue else {
                throw ProtocolError(.badRequest, "REGISTER 'methods' must be strings")
            }
            if let problem = ServiceRegistration.nameProblem(method, what: "a method name") {
                throw ProtocolError(.badRequest, problem)
            }
            methods.append(method)
        }
        let heartbeat =
            try json["heartbeat"].map { (value) throws(ProtocolError) in try HeartbeatSettings(json: value) }
            ?? .standard
        let priorities = try Self.perEvent(
            json["priorities"], "priorities", events: events, range: -1_000_000...1_000_000)
        let deadlines = try Self.perEvent(
            json["deadlines"], "deadlines", events: events, range: 1...3_600_000)
        var apps: [String] = []
        for value in json["apps"]?.arrayValue ?? [] {
            guard let app = value.stringValue else {
                throw ProtocolError(.badRequest, "REGISTER 'apps' must be strings")
            }
            if let problem = ServiceRegistration.nameProblem(app, what: "an app name") {
                throw ProtocolError(.badRequest, problem)
            }
            apps.append(app)
        }
        let interceptor = json["interceptor"]?["priority"]?.intValue.map { Int($0) }
        var bootTasks: [BootTask] = []
        for value in json["bootTasks"]?.arrayValue ?? [] {
            let task = try BootTask(json: value, service: name)
            guard task.name.hasPrefix(name + ".") else {
                throw ProtocolError(
                    .badRequest, "boot task \(task.name) of \(name) must be named \(name).something")
            }
            guard task.kind != .launcher else {
                throw ProtocolError(.badRequest, "boot task \(task.name): only the broker has launcher tasks")
            }
            bootTasks.append(task)
        }
        self.init(
            name: name, instance: instance, pid: pid, host: host, events: Array(Set(events)).sorted(),
            methods: Array(Set(methods)).sorted(), heartbeat: heartbeat, attachToken: attach,
            priorities: priorities,
            deadlines: deadlines, apps: Array(Set(apps)).sorted(), lazy: json["lazy"]?.boolValue ?? false,
            interceptorPriority: interceptor,
            bootTasks: bootTasks)
        if let describe = json["describe"], describe != .null {
            description = try ServiceDescription(json: describe, methods: self.methods)
        }
        if let replicable = json["replicable"], replicable != .null {
            guard let flag = replicable.boolValue else {
                throw ProtocolError(.badRequest, "REGISTER 'replicable' must be true or false")
            }
            self.replicable = flag
        }
        var idempotent: Set<String> = []
        for value in json["idempotent"]?.arrayValue ?? [] {
            guard let method = value.stringValue, self.methods.contains(method) else {
                throw ProtocolError(
                    .badRequest, "REGISTER 'idempotent' must name methods listed in 'methods'")
            }
            idempotent.insert(method)
        }
        self.idempotent = idempotent.sorted()
        var shared: Set<EventName> = []
        for value in json["shared"]?.arrayValue ?? [] {
            guard let text = value.stringValue, self.events.contains(EventName(rawValue: text)) else {
                throw ProtocolError(.badRequest, "REGISTER 'shared' must name events listed in 'events'")
            }
            shared.insert(EventName(rawValue: text))
        }
        self.shared = shared.sorted { $0.rawValue < $1.rawValue }
        var keyed: Set<String> = []
        for value in json["keyed"]?.arrayValue ?? [] {
            guard let method = value.stringValue, self.methods.contains(method) else {
                throw ProtocolError(.badRequest, "REGISTER 'keyed' must name methods listed in 'methods'")
            }
            keyed.insert(method)
        }
        if let value = json["keyed"], value != .null, value.arrayValue == nil {
            throw ProtocolError(.badRequest, "REGISTER 'keyed' must be an array of method names")
        }
        self.keyedMethods = keyed.sorted()
    }
}
