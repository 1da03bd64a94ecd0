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
        [
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
    }
}
