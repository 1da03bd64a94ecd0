/// ACTORS's header: the service whose actor placements are asked for (every service when absent).
package struct ActorsHeader: HeaderMessage, Equatable {
    package var service: String?

    package init(service: String?) {
        self.service = service
    }

    package static let command = Command.actors
    package static let blank = ActorsHeader(service: nil)

    package mutating func visit<Visitor: HeaderVisitor>(_ visitor: inout Visitor) throws(Visitor.Failure) {
        try visitor.field("service", &service)
    }
}
