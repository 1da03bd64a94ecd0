import LifelineProtocol

/// One process serving a registered name: its own registration (instance id, pid, host, heartbeat),
/// the connection it speaks on, when it was last heard from, and its load.
struct ServiceInstance {
    var registration: ServiceRegistration
    var peer: [UInt8]
    var joinedAt: UInt64
    var lastSeen: UInt64
    /// Events its handlers' queue dropped, as its last heartbeat said.
    var dropped: UInt64 = 0
    /// Events waiting for its handlers, and those they ran by name, as its last heartbeat said.
    var queued: UInt64 = 0
    var handled: [String: UInt64] = [:]
    /// Payloads its typed handlers could not decode, as its last heartbeat said.
    var undecodable: UInt64 = 0
    /// Events whose handler threw, as its last heartbeat said.
    var failed: UInt64 = 0
    /// Calls forwarded to it and not answered yet.
    var inFlight = 0
    /// Calls it answered (any status).
    var answered: UInt64 = 0
    /// False once its connection closed: it gets no new calls, and stays registered until it
    /// registers again (a reconnect) or its heartbeat window passes.
    var connected = true

    var id: String { registration.instance }
    var expiryTime: UInt64 { lastSeen &+ registration.heartbeat.expiryNanoseconds }
}
