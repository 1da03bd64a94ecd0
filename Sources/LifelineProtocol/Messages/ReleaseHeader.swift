/// RELEASE's header: the actor key an instance deactivated, and its service.
struct ReleaseHeader: HeaderMessage {
    var key: String
    var service: String

    static let command = Command.release
    static let blank = ReleaseHeader(key: "", service: "")

    mutating func visit<Visitor: HeaderVisitor>(_ visitor: inout Visitor) throws(Visitor.Failure) {
        try visitor.field("key", &key)
        try visitor.check(ActorKey.problem(key).map { "'key': \($0)" })
        try visitor.field("service", &service)
    }
}
