/// LOOKUP's header: the name of the service to find (findServiceByName).
struct LookupHeader: HeaderMessage {
    var name: String

    static let command = Command.lookup
    static let blank = LookupHeader(name: "")

    mutating func visit<Visitor: HeaderVisitor>(_ visitor: inout Visitor) throws(Visitor.Failure) {
        try visitor.field("name", &name)
    }
}
