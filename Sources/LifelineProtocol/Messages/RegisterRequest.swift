/// REGISTER: a service's registration and, when it resumes, the cursor of the last event it handled.
package struct RegisterRequest: Sendable, Equatable {
    public var registration: ServiceRegistration
    /// Epoch and sequence of the last event handled (section 6 of docs/PROTOCOL.md).
    public var resume: EventCursor?

    public init(_ registration: ServiceRegistration, resume: EventCursor? = nil) {
        self.registration = registration
        self.resume = resume
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
    }

    var json: JSONValue {
        var header = registration.json.objectValue ?? [:]
        if let resume { header["resume"] = resume.json }
        return .object(header)
    }
}
