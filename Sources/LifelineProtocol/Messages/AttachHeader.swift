/// ATTACH's header: the marker token whose bus subscription the broker waits for.
package struct AttachHeader: HeaderMessage, Equatable {
    package var token: String

    package init(token: String) {
        self.token = token
    }

    package static let command = Command.attach
    package static let blank = AttachHeader(token: "")
    /// The longest token whose marker (`!token`) the bus accepts.
    package static let maximumTokenBytes = 128

    package mutating func visit<Visitor: HeaderVisitor>(_ visitor: inout Visitor) throws(Visitor.Failure) {
        var token: String? = token
        try visitor.field("token", &token)
        self.token = token ?? ""
        try visitor.check(self.token.isEmpty ? "needs a string 'token'" : nil)
        // Its marker could never be subscribed: the bus refuses a marker over 128 bytes.
        try visitor.check(
            self.token.utf8.count > Self.maximumTokenBytes
                ? "'token' must be at most \(Self.maximumTokenBytes) bytes (its bus marker's limit), not \(self.token.utf8.count)"
                : nil)
    }
}
