/// The command frame of a control message (docs/PROTOCOL.md lists the frames of each).
public struct Command: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
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
    /// The answer to any request.
    public static let reply = Command(rawValue: "REPLY")

    /// Every command a peer may send.
    public static let all: [Command] = [
        .hello, .register, .unregister, .heartbeat, .lookup, .list, .call, .publish, .attach, .disconnect, .reply,
    ]

    /// Commands that carry a payload frame after the header.
    public var takesPayload: Bool { self == .publish || self == .call }

    public var description: String { rawValue }
}
