/// ATTACH's header: the marker token whose bus subscription the broker waits for.
package struct AttachHeader: HeaderMessage, Equatable {
    package var token: String

    package init(token: String) {
        self.token = token
    }

    package static let command = Command.attach
    package static let blank = AttachHeader(token: "")

    package mutating func visit<Visitor: HeaderVisitor>(_ visitor: inout Visitor) throws(Visitor.Failure) {
        var token: String? = token
        try visitor.field("token", &token)
        self.token = token ?? ""
        try visitor.check(self.token.isEmpty ? "needs a string 'token'" : nil)
    }
}
