/// TRACE's header: for how many seconds the broker publishes its trace events (a lease).
package struct TraceHeader: HeaderMessage, Equatable {
    package var seconds: Int

    package init(seconds: Int) {
        self.seconds = seconds
    }

    package static let command = Command.trace
    package static let blank = TraceHeader(seconds: 1)

    package mutating func visit<Visitor: HeaderVisitor>(_ visitor: inout Visitor) throws(Visitor.Failure) {
        try visitor.field("seconds", &seconds, in: 1...300)
    }
}
