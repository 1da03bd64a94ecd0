/// What a service tells the broker when it registers (the header of REGISTER).
public struct ServiceRegistration: Sendable, Equatable {
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

    public init(
        name: String, instance: String, pid: Int, host: String, events: [EventName], methods: [String],
        heartbeat: HeartbeatSettings = .standard, attachToken: String
    ) {
        self.name = name
        self.instance = instance
        self.pid = pid
        self.host = host
        self.events = events
        self.methods = methods
        self.heartbeat = heartbeat
        self.attachToken = attachToken
    }

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
            "name": .string(name), "instance": .string(instance), "pid": .int(Int64(pid)), "host": .string(host),
            "events": .array(events.map { .string($0.rawValue) }), "methods": .array(methods.map { .string($0) }),
            "heartbeat": heartbeat.json, "attach": .string(attachToken),
        ]
    }

    /// Reads and checks a REGISTER header.
    public init(json: JSONValue) throws(ProtocolError) {
        guard let name = json["name"]?.stringValue else { throw ProtocolError(.badRequest, "REGISTER needs a string 'name'") }
        if let problem = ServiceRegistration.nameProblem(name, what: "a service name") {
            throw ProtocolError(.badRequest, problem)
        }
        guard let instance = json["instance"]?.stringValue, !instance.isEmpty, instance.utf8.count <= 100 else {
            throw ProtocolError(.badRequest, "REGISTER needs a string 'instance' of 1–100 bytes")
        }
        guard let attach = json["attach"]?.stringValue, !attach.isEmpty, attach.utf8.count <= 100 else {
            throw ProtocolError(.badRequest, "REGISTER needs a string 'attach' token of 1–100 bytes")
        }
        let pid = Int(json["pid"]?.intValue ?? 0)
        let host = json["host"]?.stringValue ?? ""
        var events: [EventName] = []
        for value in json["events"]?.arrayValue ?? [] {
            guard let text = value.stringValue else { throw ProtocolError(.badRequest, "REGISTER 'events' must be strings") }
            do {
                events.append(try EventCatalog.validateName(text))
            } catch {
                throw ProtocolError(.badRequest, error.message)
            }
        }
        var methods: [String] = []
        for value in json["methods"]?.arrayValue ?? [] {
            guard let method = value.stringValue else { throw ProtocolError(.badRequest, "REGISTER 'methods' must be strings") }
            if let problem = ServiceRegistration.nameProblem(method, what: "a method name") {
                throw ProtocolError(.badRequest, problem)
            }
            methods.append(method)
        }
        let heartbeat = try json["heartbeat"].map { (value) throws(ProtocolError) in try HeartbeatSettings(json: value) } ?? .standard
        self.init(
            name: name, instance: instance, pid: pid, host: host, events: Array(Set(events)).sorted(),
            methods: Array(Set(methods)).sorted(), heartbeat: heartbeat, attachToken: attach)
    }
}
