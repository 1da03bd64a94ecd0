/// LOOKUP's header: the name of the service to find (findServiceByName).
package struct LookupHeader: HeaderMessage, Equatable {
    package var name: String

    package init(name: String) {
        self.name = name
    }

    package static let command = Command.lookup
    package static let blank = LookupHeader(name: "")

    package mutating func visit<Visitor: HeaderVisitor>(_ visitor: inout Visitor) throws(Visitor.Failure) {
        try visitor.field("name", &name)
    }
}
