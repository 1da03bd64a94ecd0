/// ACK: a subscribed service handled an acknowledged event (or failed to).
package struct Acknowledgement: HeaderMessage, Equatable {
    public var sequence: UInt64
    /// The event's epoch; an ACK for another broker life is ignored.
    public var epoch: UInt64?
    /// The acknowledging service.
    public var service: String
    /// The handler's error, when it failed.
    public var error: String?

    public init(sequence: UInt64, epoch: UInt64?, service: String, error: String? = nil) {
        self.sequence = sequence
        self.epoch = epoch
        self.service = service
        self.error = error
    }

    /// The ACK with request id `id` (a service acknowledges every acknowledged event).
    public func frames(id: [UInt8]) -> [[UInt8]] { frames(id: id, payload: nil) }

    package static let command = Command.ack
    package static let blank = Acknowledgement(sequence: 0, epoch: nil, service: "")

    package mutating func visit<Visitor: HeaderVisitor>(_ visitor: inout Visitor) throws(Visitor.Failure) {
        // An epoch is taken back by its bit pattern: the writer writes one above Int64.max so. A
        // malformed epoch or error does not cost the acknowledgement.
        try visitor.field("epoch", tolerant: &epoch, bitPattern: true)
        try visitor.field("error", tolerant: &error)
        try visitor.field("name", &service)
        try visitor.field("sequence", &sequence, bitPattern: false)
    }
}
