import LifelineProtocol

/// A binary min-heap of deadlines with keys, where a key may be withdrawn: withdrawn or rescheduled
/// entries stay in the heap and are skipped when they surface, and the heap is rebuilt from the live
/// keys once they are fewer than half its entries, so it stays within twice the live count.
struct DeadlineHeap<Key: Hashable> {
    private var heap: [(deadline: MonotonicInstant, key: Key)] = []
    private var live: [Key: MonotonicInstant] = [:]

    var isEmpty: Bool { live.isEmpty }

    /// Schedules `key` at `deadline` (replacing an earlier schedule of it).
    mutating func schedule(_ key: Key, at deadline: MonotonicInstant) {
        live[key] = deadline
        heap.append((deadline, key))
        siftUp(heap.count - 1)
    }

    /// Withdraws `key`.
    mutating func cancel(_ key: Key) {
        guard live.removeValue(forKey: key) != nil else { return }
        if heap.count > 64 && heap.count > 2 * live.count { rebuild() }
    }

    /// The number of entries held, live or stale (at most about twice the live ones).
    var storedCount: Int { heap.count }

    private mutating func rebuild() {
        heap = live.map { (deadline: $0.value, key: $0.key) }
        for index in stride(from: heap.count / 2 - 1, through: 0, by: -1) { siftDown(index) }
    }

    /// The earliest live deadline.
    mutating func peek() -> MonotonicInstant? {
        discardStale()
        return heap.first?.deadline
    }

    /// Removes and returns the keys due at `now`, earliest first.
    mutating func popDue(now: MonotonicInstant) -> [Key] {
        var due: [Key] = []
        while let first = peek(), first <= now {
            let top = removeTop()
            live[top.key] = nil
            due.append(top.key)
        }
        return due
    }

    private mutating func discardStale() {
        while let first = heap.first, live[first.key] != first.deadline { _ = removeTop() }
    }

    private mutating func removeTop() -> (deadline: MonotonicInstant, key: Key) {
        let top = heap[0]
        let last = heap.removeLast()
        if !heap.isEmpty {
            heap[0] = last
            siftDown(0)
        }
        return top
    }

    private mutating func siftUp(_ start: Int) {
        var child = start
        while child > 0 {
            let parent = (child - 1) / 2
            guard heap[child].deadline < heap[parent].deadline else { return }
            heap.swapAt(child, parent)
            child = parent
        }
    }

    private mutating func siftDown(_ start: Int) {
        var parent = start
        while true {
            let left = 2 * parent + 1
            let right = left + 1
            var smallest = parent
            if left < heap.count && heap[left].deadline < heap[smallest].deadline { smallest = left }
            if right < heap.count && heap[right].deadline < heap[smallest].deadline { smallest = right }
            if smallest == parent { return }
            heap.swapAt(parent, smallest)
            parent = smallest
        }
    }
}
