import LifelineProtocol

/// BOOT from clients: the report, starting a boot, and running one task on demand
/// (executeTaskWithName) — once per boot, once ever for run-once tasks.
extension BootFeature {
    mutating func handle(_ request: ClientRequest, from peer: [UInt8], id: [UInt8], in core: inout BrokerCore)
    {
        guard case .boot(let operation) = request else { return }
        switch operation {
        case .report:
            guard var run = boot else {
                if let earlier {
                    core.reply(peer, id, earlier)
                } else {
                    core.reply(peer, id, BootReplies.NotStarted(phases: phases, planned: plannedTasks(core)))
                }
                return
            }
            // A boot still waiting names the services it waits for.
            if run.state == .waiting {
                run.missing = core.configuration.expectedServices.filter {
                    core.registry.entry(named: $0) == nil
                }
            }
            core.reply(peer, id, BootReport.report(run, phases: phases, now: core.nanoseconds))
        case .start(let options):
            if requestBoot(launchOptions: options, reason: "a BOOT start request", in: &core), let run = boot
            {
                core.reply(peer, id, BootReplies.Started(boot: Int64(run.number), state: run.state.rawValue))
            } else {
                core.fail(peer, id, .conflict, "boot #\(boot?.number ?? 0) is already under way")
            }
        case .run(let name): runOnDemand(name, from: peer, id: id, in: &core)
        }
    }

    private mutating func runOnDemand(
        _ name: String, from peer: [UInt8], id: [UInt8], in core: inout BrokerCore
    ) {
        let known = boot?.scheduler?.record(name)?.task ?? plannedTasks(core).first { $0.name == name }
        guard let task = known else {
            core.fail(peer, id, .notFound, "no boot task named '\(name)'")
            return
        }
        if task.runsOnce && runOnceDone.contains(name) {
            var when = "in an earlier boot"
            if case .finished(.done)? = boot?.scheduler?.record(name)?.state {
                when = "in boot #\(boot?.number ?? 0)"
            }
            core.fail(peer, id, .conflict, "\(name) is a run-once task and already ran \(when)")
            return
        }
        let number = boot?.number ?? 0
        if let record = boot?.scheduler?.record(name),
            boot?.isActive == true || boot?.state == .done || boot?.state == .failed
        {
            switch record.state {
            case .finished(let outcome):
                let at =
                    record.started.map {
                        "started at +\(($0 &- (boot?.scheduler?.startedAt ?? $0)) / 1_000_000) ms"
                    }
                    ?? ""
                core.fail(
                    peer, id, .conflict, "\(name) already ran in boot #\(number) (\(outcome.rawValue), \(at))"
                )
                return
            case .running:
                core.fail(peer, id, .conflict, "\(name) is running in boot #\(number)")
                return
            case .waiting:
                guard var run = boot, var scheduler = run.scheduler,
                    scheduler.claim(name, now: core.nanoseconds)
                else { return }
                run.scheduler = scheduler
                run.onDemand[name] = (peer, id)
                boot = run
                runTaskNow(task, in: &core)
                return
            }
        }
        if ranOnDemand.contains(name) {
            core.fail(peer, id, .conflict, "\(name) already ran on demand; it runs once per boot")
            return
        }
        ranOnDemand.insert(name)
        guard let entry = core.registry.entry(named: task.service), task.kind != .launcher else {
            core.fail(peer, id, .unavailable, "the service \(task.service) is not registered")
            return
        }
        let key = keys.next()
        onDemandRuns[key] = (peer, id, task)
        let forward = core.correlator.open(
            .boot, key: key, peer: entry.servingPeer, deadline: core.deadline(task.deadlineMilliseconds))
        let run = BootTaskRun(
            task: name, kind: task.kind, condition: task.condition, launchOptions: .emptyObject,
            timeoutMilliseconds: task.deadlineMilliseconds)
        core.send(entry.servingPeer, .boot(run), id: forward)
    }

    /// The answer to a task run on demand outside a boot; false when `wait` is not one.
    mutating func answeredOnDemand(
        _ wait: Correlator.Entry, with reply: ControlReply, in core: inout BrokerCore
    )
        -> Bool
    {
        guard let (peer, id, task) = onDemandRuns.removeValue(forKey: wait.key) else { return false }
        let outcome: String
        let reason: String?
        if reply.status.isSuccess {
            switch BootTaskOutcome(bytes: reply.body) {
            case .done: (outcome, reason) = ("done", nil)
            case .skipped(let why): (outcome, reason) = ("skipped", why)
            }
        } else {
            (outcome, reason) = ("failed", reply.errorMessage)
        }
        if outcome == "done" && task.runsOnce {
            runOnceDone.insert(task.name)
            core.persist("boot.json", bootFile(now: core.nanoseconds))
        }
        core.reply(peer, id, BootReplies.TaskRun(task: task.name, outcome: outcome, reason: reason))
        return true
    }

    /// A task run on demand outside a boot missed its deadline; false when `wait` is not one.
    mutating func expiredOnDemand(_ wait: Correlator.Entry, in core: inout BrokerCore) -> Bool {
        guard let (peer, id, task) = onDemandRuns.removeValue(forKey: wait.key) else { return false }
        core.fail(
            peer, id, .timeout,
            "\(task.name) did not answer within its deadline of \(task.deadlineMilliseconds) ms")
        return true
    }
}
