/// One actor by key as the ACTORS reply lists it: where it is placed, since when, how many calls it
/// got there.
package struct ActorPlacement: Sendable, Equatable {
    public var service: String
    public var key: String
    /// The instance id of the process that hosts it.
    public var instance: String
    public var host: String
    public var pid: Int
    /// Broker wall clock when it was placed there, milliseconds since 1970.
    public var sinceMilliseconds: Int64
    /// Calls sent to it since it was placed, and those not answered yet.
    public var calls: UInt64
    public var inFlight: Int
    /// True while its instance's connection is closed: calls to it wait for the instance to come
    /// back or for its heartbeat window to pass (then the key moves).
    public var waiting: Bool

    public init(
        service: String, key: String, instance: String, host: String, pid: Int, sinceMilliseconds: Int64,
        calls: UInt64, inFlight: Int, waiting: Bool
    ) {
        self.service = service
        self.key = key
        self.instance = instance
        self.host = host
        self.pid = pid
        self.sinceMilliseconds = sinceMilliseconds
        self.calls = calls
        self.inFlight = inFlight
        self.waiting = waiting
    }

    public var json: JSONValue {
        [
            "service": .string(service), "key": .string(key), "instance": .string(instance),
            "host": .string(host), "pid": .int(Int64(pid)), "sinceMs": .int(sinceMilliseconds),
            "calls": .int(Int64(clamping: calls)), "inFlight": .int(Int64(inFlight)),
            "waiting": .bool(waiting),
        ]
    }

    /// Reads one entry of the ACTORS reply.
    /// - Throws: ``ProtocolError`` when `service`, `key` or `instance` is missing.
    public init(json: JSONValue) throws(ProtocolError) {
        guard let service = json["service"]?.stringValue, let key = json["key"]?.stringValue,
            let instance = json["instance"]?.stringValue
        else { throw ProtocolError(.badRequest, "an ACTORS entry needs 'service', 'key' and 'instance'") }
        self.init(
            service: service, key: key, instance: instance, host: json["host"]?.stringValue ?? "",
            pid: Int(json["pid"]?.intValue ?? 0), sinceMilliseconds: json["sinceMs"]?.intValue ?? 0,
            calls: UInt64(max(0, json["calls"]?.intValue ?? 0)),
            inFlight: Int(json["inFlight"]?.intValue ?? 0),
            waiting: json["waiting"]?.boolValue ?? false)
    }
}
