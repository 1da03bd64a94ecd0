/// The body of every reply that is not 2xx, declared once: `{"error": sentence}`, with a standby's
/// mark (`standby`: the request was not taken, send it to the leader) and word on its group's leader
/// (`leader`, the leader's control endpoints), both on a 503, or how long until a taken name may be
/// free (`retryAfterMs`, on a 409 or 403 of REGISTER).
package struct ErrorReply: WireRecord, Equatable {
    package var error: String
    package var leader: [String]?
    package var standby: Bool?
    package var retryAfterMilliseconds: Int?

    package init(
        _ error: String, leader: [String]? = nil, standby: Bool? = nil, retryAfterMilliseconds: Int? = nil
    ) {
        self.error = error
        self.leader = leader
        self.standby = standby
        self.retryAfterMilliseconds = retryAfterMilliseconds
    }

    package static var blank: Self { Self("") }
    package static var recordName: String { "an error reply" }

    package mutating func visit<Visitor: HeaderVisitor>(_ visitor: inout Visitor) throws(Visitor.Failure) {
        try visitor.field("error", &error, default: "")
        try visitor.field("leader", optionalList: &leader)
        try visitor.field("retryAfterMs", &retryAfterMilliseconds, in: 0...Int.max)
        try visitor.field("standby", &standby)
    }
}

/// The RELEASE reply: whether the placement was forgotten, and when it was not, how many calls to
/// the key are still on their way.
package struct ReleaseReply: WireRecord, Equatable {
    package var released: Bool
    package var inFlight: Int?

    package init(released: Bool, inFlight: Int? = nil) {
        self.released = released
        self.inFlight = inFlight
    }

    package static var blank: Self { Self(released: false) }
    package static var recordName: String { "the RELEASE reply" }

    package mutating func visit<Visitor: HeaderVisitor>(_ visitor: inout Visitor) throws(Visitor.Failure) {
        try visitor.field("inFlight", &inFlight, in: 0...Int.max)
        try visitor.field("released", always: &released, default: false)
    }
}
