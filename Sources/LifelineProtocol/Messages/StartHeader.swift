/// START's header (broker → service): the service whose start hook to run.
package struct StartHeader: HeaderMessage, Equatable {
    package var name: String

    package init(name: String) {
        self.name = name
    }

    package static let command = Command.start
    package static let blank = StartHeader(name: "")

    package mutating func visit<Visitor: HeaderVisitor>(_ visitor: inout Visitor) throws(Visitor.Failure) {
        try visitor.field("name", &name)
    }
}
