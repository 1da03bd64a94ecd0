/// DISCONNECT's header (broker → service): why the broker forgets the connection.
package struct DisconnectHeader: HeaderMessage, Equatable {
    package var reason: String?

    package init(reason: String?) {
        self.reason = reason
    }

    package static let command = Command.disconnect
    package static let blank = DisconnectHeader(reason: nil)

    package mutating func visit<Visitor: HeaderVisitor>(_ visitor: inout Visitor) throws(Visitor.Failure) {
        try visitor.field("reason", &reason)
    }
}
