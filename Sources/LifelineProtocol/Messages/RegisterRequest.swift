/// REGISTER: a service's registration and, when it resumes, the cursor of the last event it handled.
package struct RegisterRequest: HeaderMessage, Equatable {
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

    package static let command = Command.register
    package static let blank = RegisterRequest(.blank)

    /// The registration's fields with `resume` and `holding` among them (one declaration:
    /// ``ServiceRegistration/visit(_:resume:holding:)``), and the rules for `holding`.
    package mutating func visit<Visitor: HeaderVisitor>(_ visitor: inout Visitor) throws(Visitor.Failure) {
        try registration.visit(&visitor, resume: &resume, holding: &holding)
        try visitor.check(
            !holding.isEmpty && registration.keyedMethods.isEmpty
                ? "'holding' names actor keys, but the service hosts no actors by key" : nil)
        try visitor.check(holding.lazy.compactMap { ActorKey.problem($0).map { "'holding': \($0)" } }.first)
    }
}
