/// The command frame of a control message (docs/PROTOCOL.md lists the frames of each).
package struct Command: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public let rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }

    /// Any client → broker: where is the bus, what are the heartbeat rules.
    public static let hello = Command(rawValue: "HELLO")
    /// Service → broker: join the registry.
    public static let register = Command(rawValue: "REGISTER")
    /// Service → broker: leave the registry.
    public static let unregister = Command(rawValue: "UNREGISTER")
    /// Either way, no reply: the sender is alive.
    public static let heartbeat = Command(rawValue: "HEARTBEAT")
    /// Client → broker: findServiceByName.
    public static let lookup = Command(rawValue: "LOOKUP")
    /// Client → broker: every registered service.
    public static let list = Command(rawValue: "LIST")
    /// Client → broker → service: a request/reply call.
    public static let call = Command(rawValue: "CALL")
    /// Client → broker: publish an event on the bus.
    public static let publish = Command(rawValue: "PUBLISH")
    /// Client → broker: reply once the bus has seen this client's marker subscription.
    public static let attach = Command(rawValue: "ATTACH")
    /// Broker → service, no reply: forget your registration (broker leaving or peer unknown).
    public static let disconnect = Command(rawValue: "DISCONNECT")
    /// Client → broker: offer an event to its handlers one after another and report their answers.
    public static let dispatch = Command(rawValue: "DISPATCH")
    /// Broker → service: one step of a dispatch; the service answers with its callback result.
    public static let offer = Command(rawValue: "OFFER")
    /// Service → broker, no reply: an acknowledged event was handled.
    public static let ack = Command(rawValue: "ACK")
    /// Service → broker: send me the journal's events after a sequence.
    public static let replay = Command(rawValue: "REPLAY")
    /// Broker → service, no reply: one event from the journal (replay).
    public static let event = Command(rawValue: "EVENT")
    /// Any client → broker: an operation on the micro-app stack (start, exit, list, find, …).
    public static let apps = Command(rawValue: "APPS")
    /// Broker → host: a lifecycle callback of one micro-app session; the host answers when done.
    public static let app = Command(rawValue: "APP")
    /// Broker → service: a start request to see, change or refuse before it happens.
    public static let intercept = Command(rawValue: "INTERCEPT")
    /// Broker → service: run your start hook (DTService start); the service answers when done.
    public static let start = Command(rawValue: "START")
    /// Client → broker: the boot loader (report, run a task, start a boot). Broker → service: run a
    /// boot task and answer its outcome.
    public static let boot = Command(rawValue: "BOOT")
    /// Any client → broker: the broker's counters, and calls by service and method.
    public static let stats = Command(rawValue: "STATS")
    /// Any client → broker: publish dispatch steps and calls on the bus for a while.
    public static let trace = Command(rawValue: "TRACE")
    /// Service → broker: an idle actor by key was deactivated; forget where it was placed.
    public static let release = Command(rawValue: "RELEASE")
    /// Any client → broker: where the actors by key are placed.
    public static let actors = Command(rawValue: "ACTORS")
    /// The answer to any request.
    public static let reply = Command(rawValue: "REPLY")

    /// Every command a peer may send.
    public static let all: [Command] = [
        .hello, .register, .unregister, .heartbeat, .lookup, .list, .call, .publish, .attach, .disconnect,
        .dispatch, .offer,
        .ack, .replay, .event, .apps, .app, .intercept, .start, .boot, .stats, .trace, .release,
        .actors, .reply,
    ]

    /// Every command by its frame bytes.
    static let byBytes: [[UInt8]: Command] = Dictionary(
        uniqueKeysWithValues: all.map { (Array($0.rawValue.utf8), $0) })

    /// The command's frame bytes.
    public var bytes: [UInt8] { Array(rawValue.utf8) }

    /// Commands that carry a payload frame after the header.
    public var takesPayload: Bool { [.publish, .call, .dispatch, .offer, .event, .app].contains(self) }

    public var description: String { rawValue }
}
