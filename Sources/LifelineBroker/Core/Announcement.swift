import LifelineProtocol

/// Why a service left the registry.
enum Departure: String {
    /// It said goodbye (UNREGISTER): a clean stop.
    case unregistered
    /// It fell silent for longer than its heartbeat window: it crashed or lost the network.
    case expired
    /// Its key left the policy: the broker dropped it.
    case revoked
}

/// What the core tells every feature, in order, after a step: the only way features learn of each
/// other's work.
enum Announcement {
    /// A name was admitted (`renewed`: the same instance again, after a reconnect).
    case registered(ServiceRegistration, renewed: Bool)
    /// An instance of a service hosting actors by key was admitted (or admitted again), on `peer`,
    /// saying which keys it holds active (REGISTER `holding`): announced before its `registered` or
    /// `instanceJoined`, so that its keys are placed on it before any held call is placed anew.
    case holding(ServiceRegistration, peer: [UInt8], keys: [String])
    /// A name left the registry (with its last instance).
    case gone(ServiceRegistration, reason: Departure)
    /// Another instance joined a replicable name: it has `instances` now.
    case instanceJoined(ServiceRegistration, peer: [UInt8], instances: Int)
    /// One of several instances of a name left (the name stays: it has `remaining`).
    case instanceLeft(ServiceRegistration, peer: [UInt8], reason: Departure, remaining: Int)
    /// The connection of `peer` closed: the instances on it get no more calls, and the calls they
    /// were answering are sent elsewhere (idempotent) or fail at once.
    case cutOff(peer: [UInt8], names: [String])
    /// An event was published that `names` receive `shared` (one instance of each).
    case sharedEvent(BusMessage, names: Set<String>)
    /// didFinishLaunching or didBecomeActive took effect (published, or dispatched without ending the
    /// launch early), with the event's payload.
    case launched(EventName, payload: JSONValue, by: String)
    /// `service` finished starting (or gave up) on the instance on `peer` (nil: none ran its
    /// start): requests that waited for it may go on, and its other instances start.
    case started(service: String, on: [UInt8]?)
    /// The boot asks for the Launcher micro-app.
    case launcherRequested
    /// The Launcher started, or could not (`reason` says why).
    case launcherFinished(BootScheduler.Outcome, reason: String?)
    /// No boot is under way any more: services register and start at once from now on.
    case bootSettled
}
