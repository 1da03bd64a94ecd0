/// START's header (broker → service): the service whose start hook to run.
struct StartHeader: HeaderMessage {
    var name: String

    static let command = Command.start
    static let blank = StartHeader(name: "")

    mutating func visit<Visitor: HeaderVisitor>(_ visitor: inout Visitor) throws(Visitor.Failure) {
        try visitor.field("name", &name)
    }
}
