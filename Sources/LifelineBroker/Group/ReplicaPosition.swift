/// How far a member's copy of the state goes: the index of the last replicated entry it holds and
/// the term that entry was written in. Compared term first, as Raft compares logs: a copy whose
/// last entry is of a later term holds every entry committed before that term began.
package struct ReplicaPosition: Comparable, Hashable, Sendable, CustomStringConvertible {
    package var term: UInt64
    package var index: UInt64

    package init(term: UInt64, index: UInt64) {
        self.term = term
        self.index = index
    }

    package static let empty = ReplicaPosition(term: 0, index: 0)

    package static func < (a: ReplicaPosition, b: ReplicaPosition) -> Bool {
        (a.term, a.index) < (b.term, b.index)
    }

    package var description: String { "index \(index) of term \(term)" }
}
