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
}

/// A LOOKUP reply, and each entry of LIST's: the registration's fields (but its `attach` token) and
/// the broker's beside them, declared once.
extension ServiceRecord: WireRecord {
    package static var blank: Self {
        Self(
            registration: .blank, registeredAtMilliseconds: 0, lastSeenMillisecondsAgo: 0,
            uptimeMilliseconds: 0)
    }
    package static var recordName: String { "a service record" }
    package static var fieldsInOrder: Bool { false }

    package mutating func visit<Visitor: HeaderVisitor>(_ visitor: inout Visitor) throws(Visitor.Failure) {
        try registration.visitAsRecord(&visitor)
        try visitor.field("dropped", &dropped, default: 0, bitPattern: false)
        if registration.replicable || !instances.isEmpty {
            try visitor.field("instances", records: &instances)
        }
        try visitor.field("lastHeartbeatMsAgo", &lastSeenMillisecondsAgo, default: 0)
        try visitor.field("registeredAt", &registeredAtMilliseconds, default: 0)
        try visitor.field("started", always: &started, default: false)
        try visitor.field("uptimeMs", &uptimeMilliseconds, default: 0)
    }
}

/// The LIST reply: every registered service's record, by name.
package struct ServiceList: WireRecord, Equatable {
    package var services: [ServiceRecord]

    package init(services: [ServiceRecord]) { self.services = services }

    package static var blank: Self { Self(services: []) }
    package static var recordName: String { "the LIST reply" }

    package mutating func visit<Visitor: HeaderVisitor>(_ visitor: inout Visitor) throws(Visitor.Failure) {
        try visitor.field("services", records: &services)
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

extension ServiceRecord: CustomStringConvertible {
    /// One line: the name, where it runs, what it handles and answers.
    public var description: String {
        let placed =
            instances.count > 1
            ? "\(instances.count) instances" : "pid \(pid) on \(host)"
        var parts = [placed]
        if !events.isEmpty { parts.append("events: " + events.map(\.rawValue).joined(separator: ", ")) }
        if !methods.isEmpty { parts.append("methods: " + methods.joined(separator: ", ")) }
        if !apps.isEmpty { parts.append("apps: " + apps.joined(separator: ", ")) }
        parts.append(started ? "started" : "not started")
        return "\(name) (\(parts.joined(separator: "; ")))"
    }
}
