/// DISCONNECT's header (broker → service): why the broker forgets the connection.
struct DisconnectHeader: HeaderMessage {
    var reason: String?

    static let command = Command.disconnect
    static let blank = DisconnectHeader(reason: nil)

    mutating func visit<Visitor: HeaderVisitor>(_ visitor: inout Visitor) throws(Visitor.Failure) {
        try visitor.field("reason", &reason)
    }
}
