import LifelineProtocol

/// The boot loader across processes. A boot starts on didFinishLaunching (or didBecomeActive, or
/// `lifeline boot start`), waits for the services the topology expects (or `bootWaitMilliseconds`),
/// plans the tasks every registered service declared — plus each non-lazy service's implicit
/// `NAME.start`, the topology's overrides and the Launcher in the last phase — and runs them with
/// ``BootScheduler``. Run-once tasks are remembered in the state directory (`boot.json`).
struct BootFeature: BrokerFeature {
    static let launcherTaskName = "broker.launcher"

    /// The current or last boot.
    var boot: BootRun?
    /// Run-once tasks that ran in some boot (kept in `boot.json`).
    var runOnceDone: Set<String>
    /// Tasks run by hand (`lifeline boot run`) since the last boot started.
    var ranOnDemand: Set<String> = []
    /// Tasks run on demand outside a boot's plan: key → the client waiting and the task.
    var onDemandRuns: [UInt64: (peer: [UInt8], requestID: [UInt8], task: BootTask)] = [:]
    var keys = KeyCounter()
    /// The correlator wait of a boot waiting for its services.
    var readinessWait: [UInt8]?

    let phases: [String]
    /// The report of the last boot of an earlier broker on this state directory (`boot.json`),
    /// until this broker boots: what a BOOT report answers, and what the next boot's number follows.
    var earlier: BootReplies.Report?

    init(phases: [String], bootState: JSONValue?) {
        self.phases = phases
        runOnceDone = Set((bootState?["runOnce"]?.arrayValue ?? []).compactMap(\.stringValue))
        earlier = bootState?["last"].flatMap { try? BootReplies.Report(json: $0) }.map(Self.restored)
    }

    /// The last boot of the broker's earlier life, marked `restored`. One it stopped in the middle
    /// of (waiting or running) ended there — nothing runs it on: it is reported failed, and so is
    /// each of its tasks that had not finished.
    static func restored(_ report: BootReplies.Report) -> BootReplies.Report {
        var restored = report
        restored.restored = true
        guard report.state == BootRun.State.waiting.rawValue || report.state == BootRun.State.running.rawValue
        else { return restored }
        let stopped =
            "the broker stopped while boot #\(report.boot) was "
            + (report.state == BootRun.State.waiting.rawValue ? "waiting for its services" : "running")
        restored.state = BootRun.State.failed.rawValue
        restored.error = stopped
        for index in restored.tasks?.indices ?? 0..<0
        where !["done", "skipped", "failed"].contains(restored.tasks?[index].state ?? "") {
            restored.tasks?[index].state = "failed"
            restored.tasks?[index].reason = stopped
        }
        return restored
    }

    /// What `boot.json` holds at `now`: the run-once tasks done, and the report of the current boot
    /// (or of the earlier life's, until this broker boots).
    func bootFile(now: UInt64) -> JSONValue {
        var document: [String: JSONValue] = ["runOnce": .array(runOnceDone.sorted().map { .string($0) })]
        if let boot {
            document["last"] = BootReport.report(boot, phases: phases, now: boot.endedAt ?? now).json
        } else if var earlier {
            earlier.restored = nil
            document["last"] = earlier.json
        }
        return .object(document)
    }

    mutating func react(to announcement: Announcement, in core: inout BrokerCore) {
        switch announcement {
        case .launched(let name, let payload, let reason):
            if name == .didFinishLaunching {
                _ = requestBoot(
                    launchOptions: payload["launchOptions"] ?? .emptyObject, reason: reason, in: &core)
            } else if name == .didBecomeActive && boot == nil && earlier == nil {
                // (A broker restarted on its state directory goes on in the application's state:
                // the boot that ran before it is not run again.)
                _ = requestBoot(launchOptions: .emptyObject, reason: reason, in: &core)
            }
        case .registered: checkReadiness(in: &core)
        case .gone(let registration, _): serviceGone(registration.name, in: &core)
        case .launcherFinished(let outcome, let reason):
            guard boot?.scheduler?.record(Self.launcherTaskName)?.state == .running else { return }
            finishTask(Self.launcherTaskName, outcome, reason: reason, in: &core)
        default: break
        }
    }

    /// The application launched (or asked for a boot): boot unless one is under way.
    mutating func requestBoot(launchOptions: JSONValue, reason: String, in core: inout BrokerCore) -> Bool {
        if let boot, boot.isActive {
            core.log("boot #\(boot.number) is already under way; \(reason) does not start another")
            return false
        }
        let number = (boot?.number ?? earlier.map { Int($0.boot) } ?? 0) + 1
        let waitUntil = core.deadline(core.configuration.bootWait)
        boot = BootRun(
            number: number, state: .waiting, launchOptions: launchOptions, waitUntil: waitUntil.nanoseconds)
        core.servicesStartAtOnce = false
        ranOnDemand.removeAll()
        core.log("boot #\(number) requested by \(reason)")
        readinessWait = core.correlator.open(.boot, key: 0, peer: nil, deadline: waitUntil)
        core.persist("boot.json", bootFile(now: core.nanoseconds))
        checkReadiness(in: &core)
        return true
    }

    /// Starts the waiting boot once every expected service has registered, or its wait is over.
    mutating func checkReadiness(in core: inout BrokerCore) {
        guard var run = boot, run.state == .waiting else { return }
        let missing = core.configuration.expectedServices.filter { core.registry.entry(named: $0) == nil }
        if !missing.isEmpty && core.nanoseconds < run.waitUntil {
            // Kept as it changes: a broker stopped now reports what its boot still waited for.
            if run.missing != missing {
                run.missing = missing
                boot = run
                core.persist("boot.json", bootFile(now: core.nanoseconds))
            }
            return
        }
        if let readinessWait { core.correlator.close(readinessWait) }
        readinessWait = nil
        if !missing.isEmpty {
            core.log(
                "boot #\(run.number) starts without \(missing.joined(separator: ", ")): not registered after \(core.configuration.bootWait.wholeMilliseconds) ms"
            )
        }
        run.missing = missing
        run.startedAt = core.nanoseconds
        run.startedWall = core.wall(at: core.now)
        let tasks = plannedTasks(core)
        for name in core.configuration.bootOverrides.keys.sorted()
        where !tasks.contains(where: { $0.name == name }) {
            core.log(
                "boot #\(run.number): the topology's settings for \(name) apply to no task (no registered service declares it, and it names no registered 'service' to start)"
            )
        }
        do {
            run.scheduler = try BootScheduler(
                tasks: tasks, phases: phases, launchOptions: run.launchOptions,
                ranBefore: runOnceDone, ranOnDemand: ranOnDemand, missing: Set(missing),
                maximumConcurrent: core.configuration.bootConcurrency, now: core.nanoseconds)
            run.state = .running
            boot = run
            core.persist("boot.json", bootFile(now: core.nanoseconds))
            core.publishRuntime(
                .bootDidStart,
                ["boot": .int(Int64(run.number)), "tasks": .int(Int64(run.scheduler?.records.count ?? 0))])
            advance(in: &core)
        } catch {
            run.state = .refused
            run.error = error.message
            run.endedAt = core.nanoseconds
            boot = run
            core.servicesStartAtOnce = true
            core.log(error.message)
            core.publishRuntime(
                .bootDidFinish,
                ["boot": .int(Int64(run.number)), "outcome": "refused", "error": .string(error.message)])
            core.persist("boot.json", bootFile(now: core.nanoseconds))
        }
    }

    /// Every task of the registered services, with the topology's overrides, and the Launcher.
    func plannedTasks(_ core: BrokerCore) -> [BootTask] {
        var tasks: [BootTask] = []
        for entry in core.registry.entries.values.sorted(by: { $0.order < $1.order }) {
            let registration = entry.registration
            tasks += registration.bootTasks
            if !registration.lazy && !registration.bootTasks.contains(where: { $0.kind == .start }) {
                tasks.append(
                    BootTask(
                        name: "\(registration.name).start", service: registration.name, kind: .start,
                        phase: "services"))
            }
        }
        if core.configuration.launcherApp != nil {
            tasks.append(
                BootTask(
                    name: Self.launcherTaskName, service: "broker", kind: .launcher,
                    phase: core.configuration.bootPhases.last ?? "launcher", deadlineMilliseconds: 30_000))
        }
        for (name, override) in core.configuration.bootOverrides {
            if let index = tasks.firstIndex(where: { $0.name == name }) {
                try? tasks[index].apply(override)
            } else if let service = override["service"]?.stringValue,
                core.registry.entry(named: service) != nil
            {
                var task = BootTask(name: name, service: service, kind: .start)
                try? task.apply(override)
                tasks.removeAll { $0.service == service && $0.kind == .start }
                tasks.append(task)
            }
        }
        return tasks
    }

    /// Starts whatever the scheduler allows, announces what finished, and ends the boot when done.
    mutating func advance(in core: inout BrokerCore) {
        guard var run = boot, run.state == .running, var scheduler = run.scheduler else { return }
        let starting = scheduler.next(now: core.nanoseconds)
        run.scheduler = scheduler
        boot = run
        for task in starting { runTask(task, in: &core) }
        announceProgress(in: &core)
        guard var finished = boot, var done = finished.scheduler, done.isFinished, finished.state == .running
        else { return }
        if let failure = done.failure {
            // Nothing new starts: what had not started is said to be skipped, not left waiting.
            done.skipWaiting(because: "the boot stopped: \(failure)", now: core.nanoseconds)
            boot?.scheduler = done
            announceProgress(in: &core)
            finished = boot ?? finished
        }
        finished.state = done.failure == nil ? .done : .failed
        finished.error = done.failure
        finished.endedAt = core.nanoseconds
        boot = finished
        let duration = (core.nanoseconds &- (finished.startedAt ?? core.nanoseconds)) / 1_000_000
        core.log(
            "boot #\(finished.number) \(finished.state.rawValue) in \(duration) ms"
                + (done.failure.map { ": \($0)" } ?? ""))
        core.publishRuntime(
            .bootDidFinish,
            [
                "boot": .int(Int64(finished.number)), "outcome": .string(finished.state.rawValue),
                "error": done.failure.map { .string($0) } ?? .null, "durationMs": .int(Int64(duration)),
            ])
        core.persist("boot.json", bootFile(now: core.nanoseconds))
        core.servicesStartAtOnce = true
        core.announce(.bootSettled)
    }

    mutating func runTaskNow(_ task: BootTask, in core: inout BrokerCore) { runTask(task, in: &core) }

    private mutating func runTask(_ task: BootTask, in core: inout BrokerCore) {
        let deadline = core.deadline(task.deadlineMilliseconds)
        switch task.kind {
        case .launcher:
            let key = keys.next()
            boot?.inFlight[key] = task.name
            core.correlator.open(.boot, key: key, peer: nil, deadline: deadline)
            core.announce(.launcherRequested)
        case .start, .task:
            guard let entry = core.registry.entry(named: task.service) else {
                finishTask(
                    task.name, .failed, reason: "its service \(task.service) is not registered", in: &core)
                return
            }
            if task.kind == .start && core.isStarted(task.service) {
                finishTask(task.name, .done, reason: "\(task.service) had already started", in: &core)
                return
            }
            let key = keys.next()
            boot?.inFlight[key] = task.name
            if task.kind == .start && core.starts[task.service] == nil {
                core.starts[task.service] = .starting
            }
            let peer = entry.servingPeer
            if task.kind == .start { boot?.startedOn[task.name] = peer }
            let id = core.correlator.open(.boot, key: key, peer: peer, deadline: deadline)
            let run = BootTaskRun(
                task: task.name, kind: task.kind, condition: task.condition,
                launchOptions: boot?.launchOptions ?? .emptyObject,
                timeoutMilliseconds: task.deadlineMilliseconds)
            core.send(peer, .boot(run), id: id)
        }
    }

    mutating func answered(_ wait: Correlator.Entry, with reply: ControlReply, in core: inout BrokerCore) {
        if answeredOnDemand(wait, with: reply, in: &core) { return }
        guard let name = boot?.inFlight.removeValue(forKey: wait.key) else { return }
        if reply.status.isSuccess {
            switch BootTaskOutcome(bytes: reply.body) {
            case .done: finishTask(name, .done, reason: nil, in: &core)
            case .skipped(let reason): finishTask(name, .skipped, reason: reason, in: &core)
            }
        } else {
            finishTask(name, .failed, reason: reply.errorMessage, in: &core)
        }
    }

    mutating func finishTask(
        _ name: String, _ outcome: BootScheduler.Outcome, reason: String?, in core: inout BrokerCore
    ) {
        guard var run = boot, var scheduler = run.scheduler, let record = scheduler.record(name) else {
            return
        }
        if let key = run.inFlight.first(where: { $0.value == name })?.key {
            run.inFlight[key] = nil
            core.correlator.close(owner: .boot, key: key)
        }
        scheduler.finish(name, outcome, reason: reason, now: core.nanoseconds)
        run.scheduler = scheduler
        boot = run
        if record.task.kind == .start {
            core.announce(.started(service: record.task.service, on: run.startedOn[name]))
        }
        if outcome == .done && record.task.runsOnce { runOnceDone.insert(name) }
        // Each task's end is kept: a broker killed later reports the boot as far as it went.
        core.persist("boot.json", bootFile(now: core.nanoseconds))
        if let waiter = boot?.onDemand.removeValue(forKey: name) {
            core.reply(
                waiter.peer, waiter.requestID,
                BootReplies.TaskRun(task: name, outcome: outcome.rawValue, reason: reason))
        }
        advance(in: &core)
    }

    private mutating func announceProgress(in core: inout BrokerCore) {
        guard let run = boot, let scheduler = run.scheduler else { return }
        for record in scheduler.records {
            guard case .finished(let outcome) = record.state, !run.announced.contains(record.task.name) else {
                continue
            }
            boot?.announced.insert(record.task.name)
            let duration =
                record.started.flatMap { started in record.ended.map { Int64(($0 &- started) / 1_000_000) } }
                ?? 0
            core.publishRuntime(
                .bootTaskDidFinish,
                [
                    "boot": .int(Int64(run.number)), "task": .string(record.task.name),
                    "service": .string(record.task.service), "phase": .string(record.task.phase),
                    "outcome": .string(outcome.rawValue),
                    "reason": record.reason.map { .string($0) } ?? .null,
                    "durationMs": .int(duration),
                ])
        }
    }

    mutating func expired(_ wait: Correlator.Entry, in core: inout BrokerCore) {
        if expiredOnDemand(wait, in: &core) { return }
        guard var run = boot else { return }
        if run.state == .waiting {
            if wait.id == readinessWait { readinessWait = nil }
            checkReadiness(in: &core)
            return
        }
        guard run.state == .running, var scheduler = run.scheduler else { return }
        let expired = scheduler.expire(now: core.nanoseconds)
        guard !expired.isEmpty else { return }
        run.scheduler = scheduler
        for (key, name) in run.inFlight where expired.contains(name) {
            run.inFlight[key] = nil
            core.correlator.close(owner: .boot, key: key)
        }
        boot = run
        for name in expired { core.log("boot task \(name) missed its deadline") }
        advance(in: &core)
    }

    /// A service left during a boot: its tasks fail (and what depends on them is skipped).
    private mutating func serviceGone(_ service: String, in core: inout BrokerCore) {
        guard var run = boot, run.state == .running, var scheduler = run.scheduler else { return }
        scheduler.serviceGone(service, now: core.nanoseconds)
        run.scheduler = scheduler
        for (key, name) in run.inFlight where scheduler.record(name)?.task.service == service {
            run.inFlight[key] = nil
            core.correlator.close(owner: .boot, key: key)
        }
        boot = run
        advance(in: &core)
    }
}
