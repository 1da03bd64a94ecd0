/// A position on the bus: the broker life (epoch) and the sequence of the last event handled.
/// A service that persists it can resume after a restart and get what it missed, exactly once.
public struct EventCursor: Sendable, Equatable, CustomStringConvertible {
    public var epoch: UInt64
    public var sequence: UInt64

    public init(epoch: UInt64, sequence: UInt64) {
        self.epoch = epoch
        self.sequence = sequence
    }

    package var json: JSONValue { ["epoch": .int(Int64(epoch)), "sequence": .int(Int64(sequence))] }

    public var description: String { "\(epoch):\(sequence)" }

    /// Reads `epoch:sequence`.
    public init?(_ text: String) {
        let parts = text.split(separator: ":")
        guard parts.count == 2, let epoch = UInt64(parts[0]), let sequence = UInt64(parts[1]) else {
            return nil
        }
        self.init(epoch: epoch, sequence: sequence)
    }
}

/// The broker could not give a service everything it missed: events `after`…`sequence` are lost
/// (journal trimmed, or the broker restarted). The service continues from the current state.
public struct GapNotice: Sendable, Equatable {
    public let after: UInt64
    public let reason: String
    public let epoch: UInt64
    public let sequence: UInt64

    public init(after: UInt64, reason: String, epoch: UInt64, sequence: UInt64) {
        self.after = after
        self.reason = reason
        self.epoch = epoch
        self.sequence = sequence
    }

    package init(json: JSONValue) {
        after = UInt64(json["after"]?.intValue ?? 0)
        reason = json["reason"]?.stringValue ?? "events were lost"
        epoch = UInt64(json["epoch"]?.intValue ?? 0)
        sequence = UInt64(json["sequence"]?.intValue ?? 0)
    }

    package var json: JSONValue {
        [
            "after": .int(Int64(after)), "reason": .string(reason), "epoch": .int(Int64(epoch)),
            "sequence": .int(Int64(sequence)),
        ]
    }
}
