/// What a reloaded policy changes for connections that are open: the socket shell closes them.
package struct PolicyChange: Sendable, Equatable {
    /// Public keys (Z85) the new policy no longer lists — their entry removed or given another key —
    /// with the name the old policy gave each: their connections are closed.
    package var revoked: [String: String] = [:]
    /// Public keys whose `subscribe` rule changed: their bus connections are closed, so that their
    /// subscribers subscribe again under the new rule.
    package var subscribeChanged: Set<String> = []

    package init() {}
}
