/// A registered service as the broker reports it (LOOKUP, LIST).
public struct ServiceRecord: Sendable, Equatable {
    package var registration: ServiceRegistration
    /// Wall clock at registration, milliseconds since 1970.
    public var registeredAtMilliseconds: Int64
    /// How long ago the broker last heard from the service, milliseconds.
    public var lastSeenMillisecondsAgo: Int64
    /// How long the service has been registered, milliseconds.
    public var uptimeMilliseconds: Int64
    /// True once the broker has started it (its start hook ran); lazy services start on first use.
    public var started: Bool
    /// Events its handlers' queue dropped because they fell behind, as its heartbeats report.
    public var dropped: UInt64
    /// The processes serving a replicable name, in the order they joined; empty for a service that
    /// runs as one process (its pid and host are the record's).
    public var instances: [Instance] = []

    /// One process serving a replicable name.
    public struct Instance: Sendable, Equatable {
        /// The process run's unique id (from its REGISTER).
        public var instance: String
        public var pid: Int
        public var host: String
        /// Wall clock when it joined, milliseconds since 1970.
        public var registeredAtMilliseconds: Int64
        /// How long ago the broker last heard from it, milliseconds.
        public var lastSeenMillisecondsAgo: Int64
        /// Calls forwarded to it and not answered yet.
        public var inFlight: Int
        /// False once its connection closed (it gets no calls until it registers again or expires).
        public var connected: Bool
        /// Events its handlers' queue dropped, as its heartbeats report.
        public var dropped: UInt64

        package init(
            instance: String, pid: Int, host: String, registeredAtMilliseconds: Int64,
            lastSeenMillisecondsAgo: Int64, inFlight: Int, connected: Bool, dropped: UInt64
        ) {
            self.instance = instance
            self.pid = pid
            self.host = host
            self.registeredAtMilliseconds = registeredAtMilliseconds
            self.lastSeenMillisecondsAgo = lastSeenMillisecondsAgo
            self.inFlight = inFlight
            self.connected = connected
            self.dropped = dropped
        }
    }

    package init(
        registration: ServiceRegistration, registeredAtMilliseconds: Int64, lastSeenMillisecondsAgo: Int64,
        uptimeMilliseconds: Int64,
        started: Bool = false, dropped: UInt64 = 0
    ) {
        self.dropped = dropped
        self.registration = registration
        self.registeredAtMilliseconds = registeredAtMilliseconds
        self.lastSeenMillisecondsAgo = lastSeenMillisecondsAgo
        self.uptimeMilliseconds = uptimeMilliseconds
        self.started = started
    }

    public var name: String { registration.name }
    /// The events it subscribes to.
    public var events: [EventName] { registration.events }
    /// The methods it answers.
    public var methods: [String] { registration.methods }
    /// The micro-apps it hosts.
    public var apps: [String] { registration.apps }
    /// The host name of its process.
    public var host: String { registration.host }
    /// The pid of its process (of its first instance, when it has several).
    public var pid: Int { registration.pid }
    /// Whether several processes may serve the name (they register as its ``instances``).
    public var replicable: Bool { registration.replicable }

    package var json: JSONValue {
        guard case .object(var members) = registration.json else { return registration.json }
        members["attach"] = nil
        members["registeredAt"] = .int(registeredAtMilliseconds)
        members["lastHeartbeatMsAgo"] = .int(lastSeenMillisecondsAgo)
        members["uptimeMs"] = .int(uptimeMilliseconds)
        members["started"] = .bool(started)
        members["dropped"] = .int(Int64(dropped))
        if registration.replicable { members["instances"] = .array(instances.map(\.json)) }
        return .object(members)
    }

    /// Reads a record from a LOOKUP or LIST reply.
    package init(json: JSONValue) throws(ProtocolError) {
        guard case .object(var members) = json else {
            throw ProtocolError(.badRequest, "a service record is an object")
        }
        members["attach"] = members["attach"] ?? .string("-")
        let registration = try ServiceRegistration(json: .object(members))
        self.init(
            registration: registration, registeredAtMilliseconds: json["registeredAt"]?.intValue ?? 0,
            lastSeenMillisecondsAgo: json["lastHeartbeatMsAgo"]?.intValue ?? 0,
            uptimeMilliseconds: json["uptimeMs"]?.intValue ?? 0,
            started: json["started"]?.boolValue ?? false,
            dropped: UInt64(max(0, json["dropped"]?.intValue ?? 0)))
        instances = try (json["instances"]?.arrayValue ?? []).map { (value) throws(ProtocolError) in
            try Instance(json: value)
        }
    }
}

extension ServiceRecord.Instance: WireRecord {
    package static var blank: Self {
        Self(
            instance: "", pid: 0, host: "", registeredAtMilliseconds: 0, lastSeenMillisecondsAgo: 0,
            inFlight: 0,
            connected: true, dropped: 0)
    }
    package static var recordName: String { "an instance of a service record" }

    package mutating func visit<Visitor: HeaderVisitor>(_ visitor: inout Visitor) throws(Visitor.Failure) {
        try visitor.field("connected", always: &connected, default: true)
        try visitor.field("dropped", &dropped, default: 0, bitPattern: false)
        try visitor.field("host", &host, default: "")
        try visitor.field("inFlight", &inFlight, in: 0...Int.max, default: 0)
        try visitor.field("instance", &instance)
        try visitor.field("lastHeartbeatMsAgo", &lastSeenMillisecondsAgo, default: 0)
        try visitor.field("pid", &pid, in: 0...Int.max, default: 0)
        try visitor.field("registeredAt", &registeredAtMilliseconds, default: 0)
    }
}
