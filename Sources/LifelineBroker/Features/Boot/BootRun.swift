import LifelineProtocol

/// One boot of the system: its scheduler, the task runs in flight, and how it ended.
struct BootRun {
    enum State: String { case waiting, running, done, failed, refused }

    let number: Int
    var state: State
    let launchOptions: JSONValue
    let waitUntil: UInt64
    var scheduler: BootScheduler?
    var missing: [String] = []
    var error: String?
    /// Correlator key of a task run → the task.
    var inFlight: [UInt64: String] = [:]
    /// The connection each start task was sent to (by task name).
    var startedOn: [String: [UInt8]] = [:]
    /// On-demand runs of tasks in this plan: task → the client waiting for its outcome.
    var onDemand: [String: (peer: [UInt8], requestID: [UInt8])] = [:]
    /// Finished tasks already announced on the bus.
    var announced: Set<String> = []
    var startedAt: UInt64?
    var endedAt: UInt64?
    var startedWall: UInt64 = 0

    var isActive: Bool { state == .waiting || state == .running }
}

/// The report of a boot: every task's start, duration, process and outcome, the blame list and the
/// critical chain (as systemd-analyze blame / critical-chain).
enum BootReport {
    struct Entry {
        var task: BootTask
        var state: String
        var reason: String?
        var start: Int64?
        var duration: Int64?
        /// The order in which the task started in its boot.
        var sequence: Int?
    }

    static func entries(_ scheduler: BootScheduler) -> [Entry] {
        scheduler.records.map { record in
            let start = record.started.map { Int64(($0 &- scheduler.startedAt) / 1_000_000) }
            let duration = record.started.flatMap { started in
                record.ended.map { Int64(($0 &- started) / 1_000_000) }
            }
            let state: String
            switch record.state {
            case .waiting: state = "waiting"
            case .running: state = "running"
            case .finished(let outcome): state = outcome.rawValue
            }
            return Entry(
                task: record.task, state: state, reason: record.reason, start: start, duration: duration,
                sequence: record.sequence)
        }
    }

    /// The chain of tasks that decided when the last task ended: from the task that finished last, the
    /// predecessor that finished latest — an `after` dependency, an earlier phase's task, or within the
    /// phase the synchronous task that ran before it — and so on, each task once, to a task that had
    /// none.
    static func criticalChain(_ entries: [Entry], phases: [String]) -> [Entry] {
        struct Ran {
            var entry: Entry
            var start: Int64
            var end: Int64
            /// Start order: orders tasks that started in the same millisecond.
            var sequence: Int
        }
        let ran = entries.enumerated().compactMap { position, entry -> Ran? in
            guard entry.state == "done" || entry.state == "failed", let start = entry.start,
                let duration = entry.duration
            else { return nil }
            return Ran(
                entry: entry, start: start, end: start + duration, sequence: entry.sequence ?? position)
        }
        func finishedEarlier(_ a: Ran, _ b: Ran) -> Bool { (a.end, a.sequence) < (b.end, b.sequence) }
        guard var current = ran.max(by: finishedEarlier) else { return [] }
        var chain = [current.entry]
        var visited: Set<String> = [current.entry.task.name]
        let phaseOrder = Dictionary(uniqueKeysWithValues: phases.enumerated().map { ($1, $0) })
        while true {
            let task = current.entry.task
            let predecessors = ran.filter { candidate in
                let other = candidate.entry.task
                guard !visited.contains(other.name), candidate.end <= current.start,
                    (candidate.start, candidate.sequence) < (current.start, current.sequence)
                else { return false }
                if task.after.contains(other.name) { return true }
                let (theirs, mine) = (phaseOrder[other.phase] ?? 0, phaseOrder[task.phase] ?? 0)
                return theirs < mine || (theirs == mine && !other.isAsynchronous && !task.isAsynchronous)
            }
            guard let predecessor = predecessors.max(by: finishedEarlier) else { break }
            chain.append(predecessor.entry)
            visited.insert(predecessor.entry.task.name)
            current = predecessor
        }
        return chain
    }

    /// The report of `run` at `now`, as BOOT `report` answers it.
    static func report(_ run: BootRun, phases: [String], now: UInt64) -> BootReplies.Report {
        var report = BootReplies.Report(
            boot: Int64(run.number), state: run.state.rawValue, launchOptions: run.launchOptions,
            phases: phases, missing: run.missing, startedAt: Int64(run.startedWall / 1_000_000))
        report.error = run.error
        // A boot that has not started (waiting, or refused) took no time and has no tasks yet.
        report.durationMilliseconds = run.startedAt.map { Int(((run.endedAt ?? now) &- $0) / 1_000_000) } ?? 0
        guard let scheduler = run.scheduler else {
            (report.tasks, report.blame, report.criticalChain) = ([], [], [])
            return report
        }
        let entries = Self.entries(scheduler)
        report.tasks = entries.map { entry in
            var task = BootReplies.Report.Task()
            task.name = entry.task.name
            task.service = entry.task.service
            task.kind = entry.task.kind.rawValue
            task.phase = entry.task.phase
            task.priority = entry.task.priority
            task.isAsynchronous = entry.task.isAsynchronous
            task.after = entry.task.after
            task.isRequired = entry.task.isRequired
            task.runsOnce = entry.task.runsOnce
            task.state = entry.state
            task.reason = entry.reason
            task.startMilliseconds = entry.start
            task.durationMilliseconds = entry.duration
            return task
        }
        report.blame = entries.filter { $0.duration != nil && $0.state != "skipped" }.sorted {
            $0.duration! > $1.duration!
        }.map(\.task.name)
        report.criticalChain = criticalChain(entries, phases: phases).map(\.task.name)
        if let failure = scheduler.failure { report.error = failure }
        return report
    }
}
