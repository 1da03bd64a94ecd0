/// REGISTER: a service's registration and, when it resumes, the cursor of the last event it handled.
package struct RegisterRequest: Sendable, Equatable {
    public var registration: ServiceRegistration
    /// Epoch and sequence of the last event handled (section 6 of docs/PROTOCOL.md).
    public var resume: EventCursor?
    /// The actor keys this instance holds active when it registers again (after a reconnect or a
    /// broker restart): the broker keeps them placed on it.
    public var holding: [String] = []

    public init(_ registration: ServiceRegistration, resume: EventCursor? = nil, holding: [String] = []) {
        self.registration = registration
        self.resume = resume
        self.holding = holding
    }

    init(_ fields: HeaderFields) throws(ProtocolError) {
        do {
            registration = try ServiceRegistration(json: .object(fields.object))
        } catch {
            throw ProtocolError(error.status, error.message, requestID: fields.requestID)
        }
        if let cursor = fields.value("resume") {
            guard let epoch = cursor["epoch"]?.intValue, let sequence = cursor["sequence"]?.intValue,
                sequence >= 0
            else {
                throw fields.problem("REGISTER 'resume' needs integer fields epoch and sequence")
            }
            resume = EventCursor(epoch: UInt64(bitPattern: epoch), sequence: UInt64(sequence))
        }
        holding = try fields.strings("holding")
        if !holding.isEmpty && registration.keyedMethods.isEmpty {
            throw fields.problem(
                "REGISTER 'holding' names actor keys, but the service hosts no actors by key")
        }
        for key in holding {
            if let problem = ActorKey.problem(key) { throw fields.problem("REGISTER 'holding': \(problem)") }
        }
    }

    var json: JSONValue {
        var header = registration.json.objectValue ?? [:]
        if let resume { header["resume"] = resume.json }
        if !holding.isEmpty { header["holding"] = .array(holding.map { .string($0) }) }
        return .object(header)
    }
}
