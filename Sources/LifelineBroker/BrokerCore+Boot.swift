import LifelineProtocol

/// The boot loader across processes. A boot starts on didFinishLaunching (or didBecomeActive, or
/// `lifeline boot start`), waits for the services the topology expects (or `bootWaitMilliseconds`),
/// plans the tasks every registered service declared — plus each non-lazy service's implicit
/// `NAME.start`, the topology's overrides and the Launcher in the last phase — and runs them with
/// ``BootScheduler``. Run-once tasks are remembered in the state directory (`boot.json`).
extension BrokerCore {
    static let launcherTaskName = "broker.launcher"

    var bootFile: JSONValue {
        var document: [String: JSONValue] = ["runOnce": .array(runOnceDone.sorted().map { .string($0) })]
        if let boot {
            document["last"] = BootReport.json(boot, phases: configuration.bootPhases, now: boot.endedAt ?? 0)
        }
        return .object(document)
    }

    /// True when a registering service should be started at once rather than by the boot.
    var startsImmediately: Bool {
        guard let boot else { return false }
        return !boot.isActive || boot.scheduler?.isFinished == true
    }

    /// The application launched (or asked for a boot): boot unless one is under way.
    mutating func requestBoot(
        launchOptions: JSONValue, reason: String, now: UInt64, into output: inout [BrokerOutput]
    ) -> Bool {
        if let boot, boot.isActive {
            output.append(.log("boot #\(boot.number) is already under way; \(reason) does not start another"))
            return false
        }
        let number = (boot?.number ?? 0) + 1
        boot = BootRun(
            number: number, state: .waiting, launchOptions: launchOptions,
            waitUntil: deadline(now, configuration.bootWaitMilliseconds))
        ranOnDemand.removeAll()
        output.append(.log("boot #\(number) requested by \(reason)"))
        checkBootReadiness(now: now, into: &output)
        return true
    }

    /// Starts the waiting boot once every expected service has registered, or its wait is over.
    mutating func checkBootReadiness(now: UInt64, into output: inout [BrokerOutput]) {
        guard var run = boot, run.state == .waiting else { return }
        let missing = configuration.expectedServices.filter { registry.entry(named: $0) == nil }
        if !missing.isEmpty && now < run.waitUntil { return }
        if !missing.isEmpty {
            output.append(
                .log(
                    "boot #\(run.number) starts without \(missing.joined(separator: ", ")): not registered after \(configuration.bootWaitMilliseconds) ms"
                ))
        }
        run.missing = missing
        run.startedAt = now
        run.startedWall = wall(at: now)
        do {
            run.scheduler = try BootScheduler(
                tasks: plannedTasks(), phases: configuration.bootPhases, launchOptions: run.launchOptions,
                ranBefore: runOnceDone,
                ranOnDemand: ranOnDemand, missing: Set(missing),
                maximumConcurrent: configuration.bootConcurrency, now: now)
            run.state = .running
            boot = run
            publishRuntime(
                .bootDidStart,
                ["boot": .int(Int64(run.number)), "tasks": .int(Int64(run.scheduler?.records.count ?? 0))],
                now: now, into: &output)
            advanceBoot(now: now, into: &output)
        } catch {
            run.state = .refused
            run.error = error.message
            run.endedAt = now
            boot = run
            output.append(.log(error.message))
            publishRuntime(
                .bootDidFinish,
                ["boot": .int(Int64(run.number)), "outcome": "refused", "error": .string(error.message)],
                now: now, into: &output)
            output.append(.persist(file: "boot.json", document: bootFile))
        }
    }

    /// Every task of the registered services, with the topology's overrides, and the Launcher.
    func plannedTasks() -> [BootTask] {
        var tasks: [BootTask] = []
        for entry in registry.entries.values.sorted(by: { $0.order < $1.order }) {
            let registration = entry.registration
            tasks += registration.bootTasks
            if !registration.lazy && !registration.bootTasks.contains(where: { $0.kind == .start }) {
                tasks.append(
                    BootTask(
                        name: "\(registration.name).start", service: registration.name, kind: .start,
                        phase: "services"))
            }
        }
        if configuration.launcherApp != nil {
            tasks.append(
                BootTask(
                    name: Self.launcherTaskName, service: "broker", kind: .launcher,
                    phase: configuration.bootPhases.last ?? "launcher", deadlineMilliseconds: 30_000))
        }
        for (name, override) in configuration.bootOverrides {
            if let index = tasks.firstIndex(where: { $0.name == name }) {
                try? tasks[index].apply(override)
            } else if let service = override["service"]?.stringValue, registry.entry(named: service) != nil {
                var task = BootTask(name: name, service: service, kind: .start)
                try? task.apply(override)
                tasks.removeAll { $0.service == service && $0.kind == .start }
                tasks.append(task)
            }
        }
        return tasks
    }

    /// Starts whatever the scheduler allows, announces what finished, and ends the boot when done.
    mutating func advanceBoot(now: UInt64, into output: inout [BrokerOutput]) {
        guard var run = boot, run.state == .running, var scheduler = run.scheduler else { return }
        let starting = scheduler.next(now: now)
        run.scheduler = scheduler
        boot = run
        for task in starting { runBootTask(task, now: now, into: &output) }
        announceBootProgress(now: now, into: &output)
        guard var finished = boot, let done = finished.scheduler, done.isFinished, finished.state == .running
        else { return }
        finished.state = done.failure == nil ? .done : .failed
        finished.error = done.failure
        finished.endedAt = now
        boot = finished
        let duration = (now &- (finished.startedAt ?? now)) / 1_000_000
        output.append(
            .log(
                "boot #\(finished.number) \(finished.state.rawValue) in \(duration) ms"
                    + (done.failure.map { ": \($0)" } ?? "")))
        publishRuntime(
            .bootDidFinish,
            [
                "boot": .int(Int64(finished.number)), "outcome": .string(finished.state.rawValue),
                "error": done.failure.map { .string($0) } ?? .null,
                "durationMs": .int(Int64(duration)),
            ], now: now, into: &output)
        output.append(.persist(file: "boot.json", document: bootFile))
        for entry in registry.entries.values
        where !entry.registration.lazy && !starts.isStarted(entry.registration.name) {
            startService(entry.registration.name, now: now, into: &output)
        }
    }

    private mutating func runBootTask(_ task: BootTask, now: UInt64, into output: inout [BrokerOutput]) {
        switch task.kind {
        case .launcher:
            guard let launcher = configuration.launcherApp, !hosts(offering: launcher).isEmpty else {
                finishBootTask(
                    task.name, .failed,
                    reason: "no live host offers the Launcher '\(configuration.launcherApp ?? "?")'",
                    now: now, into: &output)
                return
            }
            if stack.newest(launcher) != nil {
                finishBootTask(
                    task.name, .done, reason: "the Launcher is already on the stack", now: now, into: &output)
                return
            }
            appQueue.append(.launch)
            pumpApps(now: now, into: &output)
        case .start, .task:
            guard let entry = registry.entry(named: task.service) else {
                finishBootTask(
                    task.name, .failed, reason: "its service \(task.service) is not registered", now: now,
                    into: &output)
                return
            }
            if task.kind == .start && starts.isStarted(task.service) {
                finishBootTask(
                    task.name, .done, reason: "\(task.service) had already started", now: now, into: &output)
                return
            }
            bootCounter += 1
            let id = Array("k\(bootCounter)".utf8)
            boot?.inFlight[id] = task.name
            if task.kind == .start { _ = starts.begin(task.service, deadline: .max) }
            let header: JSONValue = [
                "op": "run", "task": .string(task.name), "kind": .string(task.kind.rawValue),
                "condition": task.condition?.json ?? .null,
                "launchOptions": boot?.launchOptions ?? .emptyObject,
            ]
            output.append(
                .send(peer: entry.peer, frames: ControlRequest(.boot, requestID: id, header: header).frames())
            )
        }
    }

    func isBootReply(_ requestID: [UInt8]) -> Bool { boot?.inFlight[requestID] != nil }

    mutating func handleBootReply(_ reply: ControlReply, now: UInt64, into output: inout [BrokerOutput]) {
        guard let name = boot?.inFlight.removeValue(forKey: reply.requestID) else { return }
        let body = (try? reply.json()) ?? .null
        if reply.status.isSuccess {
            let skipped = body["outcome"]?.stringValue == "skipped"
            finishBootTask(
                name, skipped ? .skipped : .done, reason: body["reason"]?.stringValue, now: now, into: &output
            )
        } else {
            finishBootTask(name, .failed, reason: reply.errorMessage, now: now, into: &output)
        }
    }

    mutating func finishBootTask(
        _ name: String, _ outcome: BootScheduler.Outcome, reason: String?, now: UInt64,
        into output: inout [BrokerOutput]
    ) {
        guard var run = boot, var scheduler = run.scheduler, let record = scheduler.record(name) else {
            return
        }
        scheduler.finish(name, outcome, reason: reason, now: now)
        run.scheduler = scheduler
        boot = run
        if record.task.kind == .start {
            for (peer, request) in starts.finish(record.task.service) {
                handleRequest(request, from: peer, now: now, into: &output)
            }
        }
        if outcome == .done && record.task.runsOnce {
            runOnceDone.insert(name)
            output.append(.persist(file: "boot.json", document: bootFile))
        }
        if let waiter = boot?.onDemand.removeValue(forKey: name) {
            let body: JSONValue = [
                "task": .string(name), "outcome": .string(outcome.rawValue),
                "reason": reason.map { .string($0) } ?? .null,
            ]
            send(waiter.peer, ControlReply(requestID: waiter.requestID, json: body), into: &output)
        }
        advanceBoot(now: now, into: &output)
    }

    private mutating func announceBootProgress(now: UInt64, into output: inout [BrokerOutput]) {
        guard let run = boot, let scheduler = run.scheduler else { return }
        for record in scheduler.records {
            guard case .finished(let outcome) = record.state, !run.announced.contains(record.task.name) else {
                continue
            }
            boot?.announced.insert(record.task.name)
            let duration =
                record.started.flatMap { started in record.ended.map { Int64(($0 &- started) / 1_000_000) } }
                ?? 0
            publishRuntime(
                .bootTaskDidFinish,
                [
                    "boot": .int(Int64(run.number)), "task": .string(record.task.name),
                    "service": .string(record.task.service),
                    "phase": .string(record.task.phase), "outcome": .string(outcome.rawValue),
                    "reason": record.reason.map { .string($0) } ?? .null,
                    "durationMs": .int(duration),
                ], now: now, into: &output)
        }
    }

    mutating func expireBoot(now: UInt64, into output: inout [BrokerOutput]) {
        guard var run = boot else { return }
        if run.state == .waiting {
            checkBootReadiness(now: now, into: &output)
            return
        }
        guard run.state == .running, var scheduler = run.scheduler else { return }
        let expired = scheduler.expire(now: now)
        guard !expired.isEmpty else { return }
        run.scheduler = scheduler
        run.inFlight = run.inFlight.filter { !expired.contains($0.value) }
        boot = run
        for name in expired { output.append(.log("boot task \(name) missed its deadline")) }
        advanceBoot(now: now, into: &output)
    }

    var bootDeadline: UInt64? {
        guard let run = boot else { return nil }
        if run.state == .waiting { return run.waitUntil }
        return run.state == .running ? run.scheduler?.nextDeadline : nil
    }

    /// A service left during a boot: its tasks fail (and what depends on them is skipped).
    mutating func bootServiceGone(_ service: String, now: UInt64, into output: inout [BrokerOutput]) {
        guard var run = boot, run.state == .running, var scheduler = run.scheduler else { return }
        scheduler.serviceGone(service, now: now)
        run.scheduler = scheduler
        run.inFlight = run.inFlight.filter { scheduler.record($0.value)?.task.service != service }
        boot = run
        advanceBoot(now: now, into: &output)
    }

    /// The Launcher's start finished (the `.launch` app operation).
    mutating func launcherStarted(now: UInt64, into output: inout [BrokerOutput]) {
        guard let scheduler = boot?.scheduler, scheduler.record(Self.launcherTaskName)?.state == .running
        else { return }
        finishBootTask(Self.launcherTaskName, .done, reason: nil, now: now, into: &output)
    }

    // MARK: BOOT from clients

    mutating func bootRequest(
        _ request: ControlRequest, from peer: [UInt8], now: UInt64, into output: inout [BrokerOutput]
    ) {
        let id = request.requestID
        switch request.header["op"]?.stringValue ?? "" {
        case "report":
            guard let run = boot else {
                let planned = plannedTasks().map(\.json)
                send(
                    peer,
                    ControlReply(
                        requestID: id,
                        json: [
                            "state": "none", "planned": .array(planned),
                            "phases": .array(configuration.bootPhases.map { .string($0) }),
                        ]), into: &output)
                return
            }
            send(
                peer,
                ControlReply(
                    requestID: id, json: BootReport.json(run, phases: configuration.bootPhases, now: now)),
                into: &output)
        case "start":
            let options = request.header["launchOptions"] ?? .emptyObject
            if requestBoot(launchOptions: options, reason: "a BOOT start request", now: now, into: &output),
                let run = boot
            {
                send(
                    peer,
                    ControlReply(
                        requestID: id,
                        json: ["boot": .int(Int64(run.number)), "state": .string(run.state.rawValue)]),
                    into: &output)
            } else {
                send(
                    peer,
                    ControlReply.error(
                        .conflict, "boot #\(boot?.number ?? 0) is already under way", requestID: id),
                    into: &output)
            }
        case "run": runOnDemand(request, from: peer, now: now, into: &output)
        default:
            refuse(
                peer, ProtocolError(.badRequest, "BOOT op must be report, start or run", requestID: id),
                into: &output)
        }
    }

    /// executeTaskWithName: one task now, once per boot (once ever when run-once).
    private mutating func runOnDemand(
        _ request: ControlRequest, from peer: [UInt8], now: UInt64, into output: inout [BrokerOutput]
    ) {
        let id = request.requestID
        guard let name = request.header["task"]?.stringValue else {
            refuse(
                peer, ProtocolError(.badRequest, "BOOT run needs a string 'task'", requestID: id),
                into: &output)
            return
        }
        let known = boot?.scheduler?.record(name)?.task ?? plannedTasks().first { $0.name == name }
        guard let task = known else {
            send(
                peer, ControlReply.error(.notFound, "no boot task named '\(name)'", requestID: id),
                into: &output)
            return
        }
        if task.runsOnce && runOnceDone.contains(name) {
            send(
                peer,
                ControlReply.error(
                    .conflict, "\(name) is a run-once task and already ran in an earlier boot", requestID: id),
                into: &output)
            return
        }
        if let record = boot?.scheduler?.record(name),
            boot?.isActive == true || boot?.state == .done || boot?.state == .failed
        {
            switch record.state {
            case .finished(let outcome):
                let at =
                    record.started.map {
                        "started at +\(($0 &- (boot?.scheduler?.startedAt ?? $0)) / 1_000_000) ms"
                    } ?? ""
                send(
                    peer,
                    ControlReply.error(
                        .conflict,
                        "\(name) already ran in boot #\(boot?.number ?? 0) (\(outcome.rawValue), \(at))",
                        requestID: id), into: &output)
                return
            case .running:
                send(
                    peer,
                    ControlReply.error(
                        .conflict, "\(name) is running in boot #\(boot?.number ?? 0)", requestID: id),
                    into: &output)
                return
            case .waiting:
                guard var run = boot, var scheduler = run.scheduler, scheduler.claim(name, now: now) else {
                    return
                }
                run.scheduler = scheduler
                run.onDemand[name] = (peer, id)
                boot = run
                runBootTask(task, now: now, into: &output)
                return
            }
        }
        if ranOnDemand.contains(name) {
            send(
                peer,
                ControlReply.error(
                    .conflict, "\(name) already ran on demand; it runs once per boot", requestID: id),
                into: &output)
            return
        }
        ranOnDemand.insert(name)
        guard let entry = registry.entry(named: task.service), task.kind != .launcher else {
            send(
                peer,
                ControlReply.error(
                    .unavailable, "the service \(task.service) is not registered", requestID: id),
                into: &output)
            return
        }
        bootCounter += 1
        let forward = Array("k\(bootCounter)".utf8)
        onDemandRuns[forward] = (peer, id, task)
        let header: JSONValue = [
            "op": "run", "task": .string(name), "kind": .string(task.kind.rawValue),
            "condition": task.condition?.json ?? .null, "launchOptions": .emptyObject,
        ]
        output.append(
            .send(
                peer: entry.peer, frames: ControlRequest(.boot, requestID: forward, header: header).frames()))
    }

    /// The answer to a task run on demand outside a boot.
    mutating func handleOnDemandReply(_ reply: ControlReply, into output: inout [BrokerOutput]) -> Bool {
        guard let (peer, id, task) = onDemandRuns.removeValue(forKey: reply.requestID) else { return false }
        let body = (try? reply.json()) ?? .null
        let outcome = reply.status.isSuccess ? (body["outcome"]?.stringValue ?? "done") : "failed"
        if outcome == "done" && task.runsOnce {
            runOnceDone.insert(task.name)
            output.append(.persist(file: "boot.json", document: bootFile))
        }
        let result: JSONValue = [
            "task": .string(task.name), "outcome": .string(outcome),
            "reason": reply.status.isSuccess ? (body["reason"] ?? .null) : .string(reply.errorMessage),
        ]
        send(peer, ControlReply(requestID: id, json: result), into: &output)
        return true
    }
}
