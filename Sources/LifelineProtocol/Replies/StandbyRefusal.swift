/// What a standby of a broker group said when it refused a request (it takes none): where the
/// leader is, or that one is being elected.
package enum StandbyRefusal: Equatable, Sendable {
    /// The leader's first control endpoint.
    case leaderAt(String)
    /// The group has no leader the standby heard from lately: one is being elected.
    case noLeader
}
