/// A service's HEARTBEAT header: its name, and how its handlers fare — events dropped (they fell
/// behind), failed (their handler threw), queued, handled per event name (at most 1 000 names are
/// read) and undecodable.
package struct HeartbeatHeader: HeaderMessage, Equatable {
    package var dropped: UInt64?
    package var failed: UInt64?
    package var handled: [String: UInt64]?
    package var name: String?
    package var queued: UInt64?
    package var undecodable: UInt64?

    package init(
        dropped: UInt64? = nil, failed: UInt64? = nil, handled: [String: UInt64]? = nil, name: String? = nil,
        queued: UInt64? = nil, undecodable: UInt64? = nil
    ) {
        self.dropped = dropped
        self.failed = failed
        self.handled = handled
        self.name = name
        self.queued = queued
        self.undecodable = undecodable
    }

    package static let command = Command.heartbeat
    package static let blank = HeartbeatHeader()

    package mutating func visit<Visitor: HeaderVisitor>(_ visitor: inout Visitor) throws(Visitor.Failure) {
        // A heartbeat is never answered: what it reports is read tolerantly, never refused.
        try visitor.field("dropped", tolerant: &dropped, bitPattern: false)
        try visitor.field("failed", tolerant: &failed, bitPattern: false)
        var counts = handled.map { JSONValue.object($0.mapValues { .int(Int64(clamping: $0)) }) }
        try visitor.field("handled", any: &counts)
        handled = counts?.objectValue.map { members in
            var handled: [String: UInt64] = [:]
            for (event, count) in members.prefix(1000) {
                handled[event] = UInt64(max(0, count.intValue ?? 0))
            }
            return handled
        }
        try visitor.field("name", &name)
        try visitor.field("queued", tolerant: &queued, bitPattern: false)
        try visitor.field("undecodable", tolerant: &undecodable, bitPattern: false)
    }
}
