/// How a broker takes part in a group (`lifeline broker --group …`).
package struct GroupConfiguration: Sendable {
    /// The group's name: its keys in etcd live under `/lifeline/group/NAME/`.
    package var name: String
    /// This broker's name in the group.
    package var member: String
    /// Every member's name, this one's included; the same list on every member.
    package var members: [String]
    /// etcd's client URLs (`http://HOST:PORT`).
    package var etcd: [String]
    /// Where this broker's group socket binds (replication, positions).
    package var replicateEndpoint: String
    /// The host other brokers and clients reach this one at, in place of a wildcard address.
    package var advertiseHost: String?
    /// The etcd lease's time to live (etcd may raise it: 2 s is its least with default settings).
    package var leaseSeconds = 2
    /// How long a standby waits without a word from the leader before it revokes the leader's lease.
    package var failoverAfter: Duration = .milliseconds(600)
    /// How often the leader tells the standbys it still leads.
    package var beatInterval: Duration = .milliseconds(100)
    /// The members' CURVE keys; nil with `--insecure`: the group socket is then plain text and
    /// believes the member a message names.
    package var keys: GroupKeys?

    package init(name: String, member: String, members: [String], etcd: [String], replicateEndpoint: String) {
        self.name = name
        self.member = member
        self.members = members
        self.etcd = etcd
        self.replicateEndpoint = replicateEndpoint
    }

    package var prefix: String { "/lifeline/group/\(name)/" }
    package var leaderKey: String { prefix + "leader" }
    package var configKey: String { prefix + "config" }
    package func memberKey(_ member: String) -> String { prefix + "member/" + member }

    /// Members an entry must reach to be committed (the leader included).
    package var quorum: Int { members.count / 2 + 1 }

    /// `endpoint` with a wildcard host replaced by ``advertiseHost``.
    package func advertised(_ endpoint: String) -> String {
        guard let host = advertiseHost, endpoint.hasPrefix("tcp://") else { return endpoint }
        let rest = endpoint.dropFirst("tcp://".count)
        guard let colon = rest.lastIndex(of: ":") else { return endpoint }
        return "tcp://\(host)\(rest[colon...])"
    }
}
