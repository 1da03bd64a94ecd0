/// The publishers' ids of recent publications and what became of them, so that a repeat — a retry
/// after a timeout, or a copy a DEALER queued during an outage — is answered with the first receipt
/// instead of being published again. Bounded: the oldest ids are forgotten first.
struct RecentPublications {
    enum Outcome {
        /// Published; this was the reply (empty for a PUBLISH without reply).
        case answered([UInt8])
        /// Published and waiting for acknowledgements: repeats wait with it.
        case waiting(sequence: UInt64)
    }

    let capacity: Int
    private var outcomes: [String: Outcome] = [:]
    private var order: [String] = []
    private var head = 0

    init(capacity: Int) { self.capacity = capacity }

    func outcome(of id: String) -> Outcome? { outcomes[id] }

    /// Remembers what became of `id`, forgetting the oldest id beyond the capacity.
    mutating func record(_ id: String, _ outcome: Outcome) {
        guard capacity > 0 else { return }
        if outcomes.updateValue(outcome, forKey: id) != nil { return }
        order.append(id)
        if order.count - head > capacity {
            outcomes[order[head]] = nil
            head += 1
            if head > 4096 && head * 2 > order.count {
                order.removeFirst(head)
                head = 0
            }
        }
    }

    var count: Int { outcomes.count }
}
