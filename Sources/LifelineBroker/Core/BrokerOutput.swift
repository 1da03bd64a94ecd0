import LifelineProtocol

/// What the broker core asks its socket shell to do.
package enum BrokerOutput: Sendable, Equatable {
    /// Send `frames` on the ROUTER to `peer`.
    case send(peer: [UInt8], frames: [[UInt8]])
    /// Send `message` on the bus (consecutive events of one name go as one bus message).
    case publish(BusMessage)
    /// Write one line to the log.
    case log(String)
    /// Save `document` as `file` in the broker's state directory (when it has one), atomically.
    case persist(file: String, document: JSONValue)
    /// Append an encoded ``JournalRecord`` to the durable journal, before the event goes on the bus.
    case record([UInt8])
    /// Replace the durable journal with these encoded records (it has grown past twice its content).
    case rewriteJournal([UInt8])
}
