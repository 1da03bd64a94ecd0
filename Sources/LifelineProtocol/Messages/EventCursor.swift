/// A position on the bus: the broker life (epoch) and the sequence of the last event handled.
/// A service that persists it can resume after a restart and get what it missed, exactly once.
public struct EventCursor: Sendable, Equatable, CustomStringConvertible {
    public var epoch: UInt64
    public var sequence: UInt64

    public init(epoch: UInt64, sequence: UInt64) {
        self.epoch = epoch
        self.sequence = sequence
    }

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
    public private(set) var after: UInt64
    public private(set) var reason: String
    public private(set) var epoch: UInt64
    public private(set) var sequence: UInt64

    public init(after: UInt64, reason: String, epoch: UInt64, sequence: UInt64) {
        self.after = after
        self.reason = reason
        self.epoch = epoch
        self.sequence = sequence
    }
}

extension EventCursor: WireRecord {
    package static var blank: EventCursor { EventCursor(epoch: 0, sequence: 0) }
    package static var recordName: String { "a cursor" }

    package mutating func visit<Visitor: HeaderVisitor>(_ visitor: inout Visitor) throws(Visitor.Failure) {
        try visitor.field("epoch", &epoch, bitPattern: true)
        try visitor.field("sequence", &sequence, bitPattern: false)
    }
}

extension GapNotice: WireRecord {
    package static var blank: GapNotice {
        GapNotice(after: 0, reason: "events were lost", epoch: 0, sequence: 0)
    }
    package static var recordName: String { "a gap notice" }

    package mutating func visit<Visitor: HeaderVisitor>(_ visitor: inout Visitor) throws(Visitor.Failure) {
        try visitor.field("after", &after, default: 0, bitPattern: false)
        try visitor.field("epoch", &epoch, default: 0, bitPattern: true)
        try visitor.field("reason", &reason, default: "events were lost")
        try visitor.field("sequence", &sequence, default: 0, bitPattern: false)
    }
}
