/// TRACE's header: for how many seconds the broker publishes its trace events (a lease).
struct TraceHeader: HeaderMessage {
    var seconds: Int

    static let command = Command.trace
    static let blank = TraceHeader(seconds: 1)

    mutating func visit<Visitor: HeaderVisitor>(_ visitor: inout Visitor) throws(Visitor.Failure) {
        try visitor.field("seconds", &seconds, in: 1...300)
    }
}
