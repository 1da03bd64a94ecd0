/// ATTACH's header: the marker token whose bus subscription the broker waits for.
struct AttachHeader: HeaderMessage {
    var token: String

    static let command = Command.attach
    static let blank = AttachHeader(token: "")

    mutating func visit<Visitor: HeaderVisitor>(_ visitor: inout Visitor) throws(Visitor.Failure) {
        var token: String? = token
        try visitor.field("token", &token)
        self.token = token ?? ""
        try visitor.check(self.token.isEmpty ? "needs a string 'token'" : nil)
    }
}
