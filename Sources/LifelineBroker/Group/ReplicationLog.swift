/// The leader's side of replication (pure): the entries not yet committed, each with the output its
/// step produced, how far each standby has acknowledged, and the commit index — the highest index a
/// majority of the group holds (the leader counts as holding what it made).
///
/// Output is released only in order, entry by entry, once committed: a reply or an event never
/// leaves before the state change that preceded it is held by a majority.
package struct ReplicationLog<Output> {
    package struct Entry {
        package var index: UInt64
        package var operations: [StateOperation]
        /// What leaves once the entry is committed: its step's output and the output of steps after
        /// it that changed no state.
        package var output: [Output]
    }

    package struct Follower: Equatable {
        package var member: String
        /// The highest index it acknowledged (0 until it acknowledges its snapshot).
        package var match: UInt64
        /// When it was last heard from (monotonic nanoseconds).
        package var heard: UInt64
    }

    package let term: UInt64
    /// Members, the leader included, that must hold an entry for it to be committed.
    package let quorum: Int
    /// How far behind the last index a follower may fall before it is dropped (it joins again and
    /// is sent a snapshot).
    package let maximumLag: UInt64
    package private(set) var lastIndex: UInt64
    package private(set) var commitIndex: UInt64
    /// The term of the entry at the commit index.
    package private(set) var committedTerm: UInt64
    package private(set) var pending: [Entry] = []
    /// By routing id.
    package private(set) var followers: [[UInt8]: Follower] = [:]

    /// Starts after `position` (the state the new leader holds, all of it taken as committed: it was
    /// gathered from a majority before this term began).
    package init(term: UInt64, groupSize: Int, after position: ReplicaPosition, maximumLag: UInt64 = 100_000)
    {
        self.term = term
        self.quorum = groupSize / 2 + 1
        self.maximumLag = maximumLag
        lastIndex = position.index
        commitIndex = position.index
        committedTerm = position.term
    }

    /// The position the committed state stands at (what a snapshot of the leader's files says).
    package var committed: ReplicaPosition { ReplicaPosition(term: committedTerm, index: commitIndex) }

    /// Whether output must wait: some entry is not yet committed.
    package var isHolding: Bool { !pending.isEmpty }

    /// Adds a step's operations and output. Without operations, output waits only behind pending
    /// entries (returned at once otherwise). Returns the new entry, if one was made, and what may
    /// leave now.
    package mutating func add(_ operations: [StateOperation], output: [Output]) -> (
        entry: Entry?, release: [Entry]
    ) {
        if operations.isEmpty {
            if pending.isEmpty { return (nil, [Entry(index: commitIndex, operations: [], output: output)]) }
            pending[pending.count - 1].output += output
            return (nil, [])
        }
        lastIndex += 1
        let entry = Entry(index: lastIndex, operations: operations, output: output)
        pending.append(entry)
        return (entry, advance())
    }

    /// A standby joined (or joined again) under `peer`: it is sent a snapshot at ``committed`` and
    /// then the pending entries.
    package mutating func join(peer: [UInt8], member: String, now: UInt64) {
        followers = followers.filter { $0.value.member != member }
        followers[peer] = Follower(member: member, match: 0, heard: now)
    }

    /// `peer` holds everything up to `index`. Returns the entries this commits, in order; nil when
    /// the peer is not a follower (it must join).
    package mutating func acknowledge(peer: [UInt8], index: UInt64, now: UInt64) -> [Entry]? {
        guard var follower = followers[peer] else { return nil }
        follower.match = max(follower.match, min(index, lastIndex))
        follower.heard = now
        followers[peer] = follower
        return advance()
    }

    /// Drops followers not heard from since `cutoff` or more than ``maximumLag`` behind; returns
    /// their members.
    package mutating func dropStale(heardBefore cutoff: UInt64) -> [String] {
        let stale = followers.filter { $0.value.heard < cutoff || lastIndex - $0.value.match > maximumLag }
        for peer in stale.keys { followers[peer] = nil }
        return stale.values.map(\.member).sorted()
    }

    private mutating func advance() -> [Entry] {
        var held = followers.values.map(\.match) + [lastIndex]
        held.sort(by: >)
        guard held.count >= quorum else { return [] }
        let majority = held[quorum - 1]
        guard majority > commitIndex else { return [] }
        let count = pending.prefix { $0.index <= majority }.count
        let released = Array(pending.prefix(count))
        pending.removeFirst(count)
        commitIndex = majority
        committedTerm = term
        return released
    }
}
