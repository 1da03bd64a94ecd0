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
}

extension ActorPlacement: WireRecord {
    package static var blank: ActorPlacement {
        ActorPlacement(
            service: "", key: "", instance: "", host: "", pid: 0, sinceMilliseconds: 0, calls: 0, inFlight: 0,
            waiting: false)
    }
    package static var recordName: String { "an ACTORS entry" }

    package mutating func visit<Visitor: HeaderVisitor>(_ visitor: inout Visitor) throws(Visitor.Failure) {
        try visitor.field("calls", &calls, default: 0, bitPattern: false)
        try visitor.field("host", &host, default: "")
        try visitor.field("inFlight", &inFlight, in: 0...Int.max, default: 0)
        try visitor.field("instance", &instance)
        try visitor.field("key", &key)
        try visitor.field("pid", &pid, in: 0...Int.max, default: 0)
        try visitor.field("service", &service)
        try visitor.field("sinceMs", &sinceMilliseconds, default: 0)
        try visitor.field("waiting", always: &waiting, default: false)
    }
}
