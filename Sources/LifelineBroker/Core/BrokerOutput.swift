import LifelineProtocol

/// What the broker core asks its socket shell to do.
public enum BrokerOutput: Sendable, Equatable {
    /// Send `frames` on the ROUTER to `peer`.
    case send(peer: [UInt8], frames: [[UInt8]])
    /// Send `frames` on the bus.
    case publish([[UInt8]])
    /// Write one line to the log.
    case log(String)
    /// Save `document` as `file` in the broker's state directory (when it has one), atomically.
    case persist(file: String, document: JSONValue)
}
