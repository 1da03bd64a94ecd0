/// ACTORS's header: the service whose actor placements are asked for (every service when absent).
struct ActorsHeader: HeaderMessage {
    var service: String?

    static let command = Command.actors
    static let blank = ActorsHeader(service: nil)

    mutating func visit<Visitor: HeaderVisitor>(_ visitor: inout Visitor) throws(Visitor.Failure) {
        try visitor.field("service", &service)
    }
}
