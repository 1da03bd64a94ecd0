/// A message that does not follow the protocol, with the status to answer it with.
package struct ProtocolError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The status of the error reply.
    public let status: Status
    /// One sentence saying exactly what was wrong.
    public let message: String
    /// The request id, when the message carried one, so the reply can be matched.
    public let requestID: [UInt8]

    public init(_ status: Status, _ message: String, requestID: [UInt8] = []) {
        self.status = status
        self.message = message
        self.requestID = requestID
    }

    public var description: String { "\(status.rawValue): \(message)" }
}
