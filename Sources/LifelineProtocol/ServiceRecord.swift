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
    /// The pid of its process.
    public var pid: Int { registration.pid }

    package var json: JSONValue {
        guard case .object(var members) = registration.json else { return registration.json }
        members["attach"] = nil
        members["registeredAt"] = .int(registeredAtMilliseconds)
        members["lastHeartbeatMsAgo"] = .int(lastSeenMillisecondsAgo)
        members["uptimeMs"] = .int(uptimeMilliseconds)
        members["started"] = .bool(started)
        members["dropped"] = .int(Int64(dropped))
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
    }
}
