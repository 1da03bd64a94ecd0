/// RELEASE's header: the actor key an instance deactivated, and its service.
package struct ReleaseHeader: HeaderMessage, Equatable {
    package var key: String
    package var service: String

    package init(key: String, service: String) {
        self.key = key
        self.service = service
    }

    package static let command = Command.release
    package static let blank = ReleaseHeader(key: "", service: "")

    package mutating func visit<Visitor: HeaderVisitor>(_ visitor: inout Visitor) throws(Visitor.Failure) {
        try visitor.field("key", &key)
        try visitor.check(ActorKey.problem(key).map { "'key': \($0)" })
        try visitor.field("service", &service)
    }
}
