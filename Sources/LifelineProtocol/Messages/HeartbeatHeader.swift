/// A service's HEARTBEAT header: its name, and how its handlers fare — events dropped (they fell
/// behind), queued, handled per event name (at most 1 000 names are read) and undecodable.
struct HeartbeatHeader: HeaderMessage {
    var dropped: UInt64?
    var handled: [String: UInt64]?
    var name: String?
    var queued: UInt64?
    var undecodable: UInt64?

    static let command = Command.heartbeat
    static let blank = HeartbeatHeader()

    mutating func visit<Visitor: HeaderVisitor>(_ visitor: inout Visitor) throws(Visitor.Failure) {
        // A heartbeat is never answered: what it reports is read tolerantly, never refused.
        try visitor.field("dropped", tolerant: &dropped, bitPattern: false)
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
