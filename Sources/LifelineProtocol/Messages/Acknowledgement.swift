/// ACK: a subscribed service handled an acknowledged event (or failed to).
package struct Acknowledgement: Sendable, Equatable {
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

    init(_ fields: HeaderFields) throws(ProtocolError) {
        guard let sequence = fields.value("sequence")?.intValue, sequence >= 0,
            let service = fields.value("name")?.stringValue
        else { throw fields.problem("ACK needs an integer 'sequence' and a string 'name'") }
        self.sequence = UInt64(sequence)
        self.service = service
        self.epoch = fields.value("epoch")?.intValue.map { UInt64(bitPattern: $0) }
        self.error = fields.value("error")?.stringValue
    }

    /// The ACK with request id `id`: the frames of `ClientRequest.acknowledge(self).controlRequest(id:)`,
    /// its header written without a tree (a service acknowledges every acknowledged event).
    public func frames(id: [UInt8]) -> [[UInt8]] {
        var header = JSONObjectWriter(capacity: 64 + service.utf8.count + (error?.utf8.count ?? 0))
        if let epoch { header.add("epoch", Int64(bitPattern: epoch)) }
        if let error { header.add("error", error) }
        header.add("name", service)
        header.add("sequence", Int64(bitPattern: sequence))
        return [ProtocolID.controlBytes, Self.commandBytes, id, header.finish()]
    }

    private static let commandBytes = Array(Command.ack.rawValue.utf8)

    var json: JSONValue {
        // Bit patterns, as the reader takes the epoch back (an integer outside Int64 is no ACK's).
        var members: [String: JSONValue] = [
            "sequence": .int(Int64(bitPattern: sequence)), "name": .string(service),
        ]
        if let epoch { members["epoch"] = .int(Int64(bitPattern: epoch)) }
        if let error { members["error"] = .string(error) }
        return .object(members)
    }
}
