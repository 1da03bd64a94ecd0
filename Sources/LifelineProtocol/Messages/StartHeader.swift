/// START's header (broker → service): the service whose start hook to run.
package struct StartHeader: HeaderMessage, Equatable {
    package var name: String
    /// How long the broker waits for the answer; a stopping service waits no longer for the hook.
    package var timeoutMilliseconds: Int?

    package init(name: String, timeoutMilliseconds: Int? = nil) {
        self.name = name
        self.timeoutMilliseconds = timeoutMilliseconds
    }

    package static let command = Command.start
    package static let blank = StartHeader(name: "")

    package mutating func visit<Visitor: HeaderVisitor>(_ visitor: inout Visitor) throws(Visitor.Failure) {
        try visitor.field("name", &name)
        try visitor.field("timeoutMs", &timeoutMilliseconds, in: BrokerRequest.timeoutRange)
    }
}
