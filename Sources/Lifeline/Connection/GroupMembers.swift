/// Which broker a client talks to: one broker, or a broker group's members, of which the leader
/// answers. The one rule of leader-following for the SDK's connection and the CLI's client: a
/// member's word on the leader (a standby's 503 with `leader`) is followed first; a member that is
/// lost gives way to the next one on the list. Pure: the caller connects.
package struct GroupMembers: Sendable {
    /// The endpoints given: a group's members in order, or one broker.
    package let endpoints: [String]
    private var index = 0
    /// Where a member said the leader is, until that connection is lost.
    private var leader: String?

    /// The members of `endpoints` (at least one).
    package init(_ endpoints: [String]) {
        precondition(!endpoints.isEmpty, "a client needs a broker endpoint")
        self.endpoints = endpoints
    }

    /// The endpoint to talk to now.
    package var current: String { leader ?? endpoints[index] }

    /// Whether several members were given.
    package var isGroup: Bool { endpoints.count > 1 }

    /// A member said the leader is at `endpoint`; returns whether that is a move.
    package mutating func follow(_ endpoint: String) -> Bool {
        guard endpoint != current else { return false }
        leader = endpoint
        return true
    }

    /// The current member is lost: moves to the next member on the list (after the last one listed
    /// that was used) that is not in `avoiding` (the lost one always is). Returns false, staying
    /// where it is, when every member is to be avoided.
    @discardableResult
    package mutating func advance(avoiding: Set<String> = []) -> Bool {
        let avoid = avoiding.union([current])
        for step in 1...endpoints.count {
            let candidate = (index + step) % endpoints.count
            if !avoid.contains(endpoints[candidate]) {
                index = candidate
                leader = nil
                return true
            }
        }
        return false
    }
}
