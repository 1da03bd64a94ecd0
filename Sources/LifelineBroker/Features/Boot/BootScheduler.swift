import LifelineProtocol

/// Why a boot was refused before anything ran.
struct BootPlanError: Error, Equatable, CustomStringConvertible {
    let message: String
    var description: String { message }
}

/// The boot loader as a pure state machine (mPaaS's MPIBootLoader across processes). Phases run in
/// order; within a phase, synchronous tasks run one at a time (higher priority first) while
/// asynchronous ones run concurrently, up to a limit, higher priority first; a task waits for its
/// `after` dependencies, whichever process runs them. Time is an argument.
struct BootScheduler {
    enum Outcome: String { case done, skipped, failed }

    enum State: Equatable {
        case waiting, running
        case finished(Outcome)
    }

    struct Record {
        var task: BootTask
        var state: State = .waiting
        var reason: String?
        var started: UInt64?
        var ended: UInt64?
        /// When it started among the boot's tasks (0 first): orders tasks that started at the same instant.
        var sequence: Int?
        /// Skipped because a task it depends on (or one that task depends on) failed, not by a
        /// condition.
        var blockedByFailure = false
    }

    let phases: [String]
    let launchOptions: JSONValue
    let maximumConcurrent: Int
    let startedAt: UInt64
    private(set) var records: [Record]
    private var index: [String: Int] = [:]
    private var startedCount = 0
    private(set) var phase = 0
    /// Set when a required task failed: nothing new starts.
    private(set) var failure: String?

    /// Checks the plan and prepares it. `ranBefore`: run-once tasks that ran in earlier boots;
    /// `ranOnDemand`: tasks already run in this boot by hand; `missing`: services expected but absent,
    /// whose tasks count as failed for their dependents.
    init(
        tasks: [BootTask], phases: [String], launchOptions: JSONValue, ranBefore: Set<String> = [],
        ranOnDemand: Set<String> = [],
        missing: Set<String> = [], maximumConcurrent: Int = 4, now: UInt64
    ) throws(BootPlanError) {
        self.phases = phases
        self.launchOptions = launchOptions
        self.maximumConcurrent = max(1, maximumConcurrent)
        self.startedAt = now
        var seen: [String: Int] = [:]
        for (position, task) in tasks.enumerated() {
            if seen[task.name] != nil {
                throw BootPlanError(message: "boot refused: the task \(task.name) is declared twice")
            }
            seen[task.name] = position
            guard phases.contains(task.phase) else {
                throw BootPlanError(
                    message:
                        "boot refused: \(task.name) names the unknown phase '\(task.phase)'; phases: \(phases.joined(separator: ", "))"
                )
            }
        }
        var records = tasks.map { Record(task: $0) }
        // A phase named twice (a topology checks it) counts where it first appears.
        let phaseOrder = Dictionary(
            phases.enumerated().map { ($1, $0) }, uniquingKeysWith: { first, _ in first })
        for (position, task) in tasks.enumerated() {
            for dependency in task.after {
                if let target = seen[dependency] {
                    if phaseOrder[tasks[target].phase]! > phaseOrder[task.phase]! {
                        throw BootPlanError(
                            message:
                                "boot refused: \(task.name) (phase \(task.phase)) depends on \(dependency), which runs in the later phase \(tasks[target].phase)"
                        )
                    }
                } else if let owner = dependency.split(separator: ".").first.map(String.init),
                    missing.contains(owner)
                {
                    records[position].state = .finished(.skipped)
                    records[position].reason =
                        "depends on \(dependency), but the service \(owner) is not registered"
                } else {
                    throw BootPlanError(
                        message:
                            "boot refused: unknown dependency: \(task.name) needs \(dependency), which no service declares"
                    )
                }
            }
        }
        if let cycle = Self.cycle(in: tasks, positions: seen) {
            throw BootPlanError(message: "boot refused: dependency cycle: \(cycle.joined(separator: " → "))")
        }
        for position in records.indices where records[position].state == .waiting {
            let name = records[position].task.name
            if ranOnDemand.contains(name) {
                records[position].state = .finished(.skipped)
                records[position].reason = "already ran on demand in this boot"
            } else if records[position].task.runsOnce && ranBefore.contains(name) {
                records[position].state = .finished(.skipped)
                records[position].reason = "run-once: already ran in an earlier boot"
            }
        }
        self.records = records
        self.index = seen
    }

    /// A cycle among `after` edges, as names with the first repeated at the end, or nil.
    static func cycle(in tasks: [BootTask], positions: [String: Int]) -> [String]? {
        var color = [Int](repeating: 0, count: tasks.count)
        var path: [Int] = []
        func visit(_ node: Int) -> [String]? {
            color[node] = 1
            path.append(node)
            for dependency in tasks[node].after {
                guard let next = positions[dependency] else { continue }
                if color[next] == 1 {
                    let start = path.firstIndex(of: next)!
                    return path[start...].map { tasks[$0].name } + [tasks[next].name]
                }
                if color[next] == 0, let found = visit(next) { return found }
            }
            path.removeLast()
            color[node] = 2
            return nil
        }
        for node in tasks.indices where color[node] == 0 {
            if let found = visit(node) { return found }
        }
        return nil
    }

    func record(_ name: String) -> Record? { index[name].map { records[$0] } }

    var isFinished: Bool {
        if failure != nil { return !records.contains { $0.state == .running } }
        return records.allSatisfy { if case .finished = $0.state { true } else { false } }
    }

    /// The tasks to start now, in order; skipped tasks (conditions, failed dependencies) are settled
    /// on the way.
    mutating func next(now: UInt64) -> [BootTask] {
        guard failure == nil else { return [] }
        var starting: [BootTask] = []
        while phase < phases.count {
            let name = phases[phase]
            let inPhase = records.indices.filter { records[$0].task.phase == name }
            let pending = inPhase.filter { records[$0].state == .waiting }
            let running = inPhase.filter { records[$0].state == .running }
            if pending.isEmpty && running.isEmpty {
                phase += 1
                continue
            }
            var runningAsync = running.filter { records[$0].task.isAsynchronous }.count
            var syncRunning = running.contains { !records[$0].task.isAsynchronous }
            var settled = false
            for position in pending.sorted(by: {
                (records[$0].task.priority, -$0) > (records[$1].task.priority, -$1)
            }) {
                let task = records[position].task
                let states = task.after.compactMap { index[$0].map { records[$0] } }
                let blockers = states.filter {
                    if case .finished(let outcome) = $0.state { outcome != .done } else { false }
                }
                // A failure among them is named first: it decides whether a required task fails the boot.
                let failures = blockers.filter { $0.state == .finished(.failed) || $0.blockedByFailure }
                if let blocker = failures.first ?? blockers.first {
                    let failed = blocker.state == .finished(.failed)
                    let reason = "depends on \(blocker.task.name), which \(failed ? "failed" : "was skipped")"
                    records[position].blockedByFailure = !failures.isEmpty
                    settle(position, .skipped, reason, now: now)
                    // A required task that cannot run for a failure stops the boot as its own would.
                    if task.isRequired && records[position].blockedByFailure && failure == nil {
                        failure = "required task \(task.name) could not run: it \(reason)"
                    }
                    settled = true
                    if failure != nil { return starting }
                    continue
                }
                guard states.allSatisfy({ $0.state == .finished(.done) }) else { continue }
                if case .launchOption(let key) = task.condition,
                    launchOptions[key] == nil || launchOptions[key] == .null || launchOptions[key] == false
                {
                    settle(position, .skipped, "condition: launch option '\(key)' is not set", now: now)
                    settled = true
                    continue
                }
                if task.isAsynchronous {
                    guard runningAsync < maximumConcurrent else { continue }
                    runningAsync += 1
                } else {
                    guard !syncRunning else { continue }
                    syncRunning = true
                }
                records[position].state = .running
                markStarted(position, now: now)
                starting.append(task)
            }
            if settled && starting.isEmpty { continue }
            break
        }
        return starting
    }

    private mutating func settle(_ position: Int, _ outcome: Outcome, _ reason: String?, now: UInt64) {
        records[position].state = .finished(outcome)
        records[position].reason = reason
        if records[position].started == nil { markStarted(position, now: now) }
        records[position].ended = now
        if outcome == .failed && records[position].task.isRequired && failure == nil {
            failure = "required task \(records[position].task.name) failed: \(reason ?? "no reason given")"
        }
    }

    /// Settles every task that has not started as skipped, saying why (the boot stopped).
    mutating func skipWaiting(because reason: String, now: UInt64) {
        for position in records.indices where records[position].state == .waiting {
            records[position].state = .finished(.skipped)
            records[position].reason = reason
        }
    }

    /// Marks a waiting task as running (run on demand during the boot); false when it is not waiting.
    mutating func claim(_ name: String, now: UInt64) -> Bool {
        guard let position = index[name], records[position].state == .waiting else { return false }
        records[position].state = .running
        markStarted(position, now: now)
        return true
    }

    private mutating func markStarted(_ position: Int, now: UInt64) {
        records[position].started = now
        records[position].sequence = startedCount
        startedCount += 1
    }

    /// A running task ended.
    mutating func finish(_ name: String, _ outcome: Outcome, reason: String?, now: UInt64) {
        guard let position = index[name], records[position].state == .running else { return }
        settle(position, outcome, reason, now: now)
    }

    /// Running tasks past their deadline, failed.
    mutating func expire(now: UInt64) -> [String] {
        var expired: [String] = []
        for position in records.indices where records[position].state == .running {
            let task = records[position].task
            if now >= (records[position].started ?? now) &+ UInt64(task.deadlineMilliseconds) * 1_000_000 {
                settle(position, .failed, "missed its deadline of \(task.deadlineMilliseconds) ms", now: now)
                expired.append(task.name)
            }
        }
        return expired
    }

    var nextDeadline: UInt64? {
        records.filter { $0.state == .running }.compactMap { record in
            record.started.map { $0 &+ UInt64(record.task.deadlineMilliseconds) * 1_000_000 }
        }.min()
    }

    /// Tasks of `service` that are running or waiting fail: the service is gone.
    mutating func serviceGone(_ service: String, now: UInt64) {
        for position in records.indices
        where records[position].task.service == service && records[position].task.kind != .launcher {
            if records[position].state == .running || records[position].state == .waiting {
                records[position].state = .running
                settle(position, .failed, "its service \(service) went away", now: now)
            }
        }
    }
}
