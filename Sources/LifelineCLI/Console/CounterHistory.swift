/// Counts per name over time, from samples of counters that only grow (the broker's STATS): what
/// grew since the last sample is counted in the sample's second, and in its minute. The console keeps
/// the last ``seconds`` seconds and the last ``minutes`` minutes, for at most ``names`` names: bounded
/// memory however long it runs and however many names it sees.
struct CounterHistory: Sendable {
    /// Seconds kept (the 5-minute range).
    static let seconds = 300
    /// Minutes kept (the 1-hour range).
    static let minutes = 60
    /// Names followed at most; counts of names beyond them are not kept.
    static let names = 2_000

    /// Counts per name in each whole unit (second or minute), oldest first.
    private var bySecond: [(unit: Int64, counts: [String: Int])] = []
    private var byMinute: [(unit: Int64, counts: [String: Int])] = []
    private var last: [String: UInt64] = [:]
    private var lastEpoch: UInt64?
    private var followed: Set<String> = []

    /// Records a sample of `counts` taken at `now` (milliseconds) from the broker life `epoch`. The
    /// first sample, and the first of a new epoch, set where counting starts (a new epoch's counters
    /// start from 0).
    mutating func record(_ counts: [String: UInt64], epoch: UInt64, now: Int64) {
        defer { (last, lastEpoch) = (counts, epoch) }
        guard let lastEpoch else { return }
        var added: [String: Int] = [:]
        for (name, count) in counts {
            let before = lastEpoch == epoch ? last[name] ?? 0 : 0
            guard count > before else { continue }
            if !followed.contains(name) {
                guard followed.count < Self.names else { continue }
                followed.insert(name)
            }
            added[name] = Int(clamping: count - before)
        }
        guard !added.isEmpty else { return }
        Self.add(added, unit: now / 1000, to: &bySecond, keeping: Self.seconds)
        Self.add(added, unit: now / 60_000, to: &byMinute, keeping: Self.minutes)
    }

    private static func add(
        _ added: [String: Int], unit: Int64, to units: inout [(unit: Int64, counts: [String: Int])],
        keeping: Int
    ) {
        if units.last?.unit != unit {
            units.append((unit, [:]))
            if units.count > keeping + 1 { units.removeFirst(units.count - keeping - 1) }
        }
        units[units.count - 1].counts.merge(added, uniquingKeysWith: +)
    }

    /// The counts of the names `selected` keeps, per second over the last five minutes (`perMinute`
    /// false: up to the second before the one `now` is in) or per minute over the last hour (up to
    /// the minute `now` is in, so far): one array per name, oldest first, and the unit the last
    /// element is for.
    func series(perMinute: Bool, now: Int64, selected: (String) -> Bool) -> (
        end: Int64, values: [String: [Int]]
    ) {
        let units = perMinute ? byMinute : bySecond
        let count = perMinute ? Self.minutes : Self.seconds
        let end = perMinute ? now / 60_000 : now / 1000 - 1
        let first = end - Int64(count) + 1
        var values: [String: [Int]] = [:]
        for (unit, counts) in units where unit >= first && unit <= end {
            for (name, value) in counts where selected(name) {
                values[name, default: Array(repeating: 0, count: count)][Int(unit - first)] += value
            }
        }
        return (end, values)
    }
}
