import LifelineProtocol
import Testing

@testable import LifelineBroker

@Suite("Boot scheduler", .timeLimit(.minutes(1)))
struct BootSchedulerTests {
    static func task(
        _ name: String, phase: String = "services", priority: Int = 0, async: Bool = false,
        after: [String] = [],
        condition: BootCondition? = nil, deadline: Int = 1000, required: Bool = false, runOnce: Bool = false
    ) -> BootTask {
        BootTask(
            name: name, service: String(name.split(separator: ".")[0]), phase: phase, priority: priority,
            isAsynchronous: async, after: after,
            condition: condition, deadlineMilliseconds: deadline, isRequired: required, runsOnce: runOnce)
    }

    static let ms: UInt64 = 1_000_000

    /// Runs the scheduler to the end, each task taking `durations[name]` ms (default 10); returns the
    /// start order and the scheduler.
    static func run(_ scheduler: inout BootScheduler, durations: [String: Int] = [:], fail: Set<String> = [])
        -> [String]
    {
        var now: UInt64 = 0
        var running: [(name: String, ends: UInt64)] = []
        var order: [String] = []
        for _ in 0..<1000 {
            for task in scheduler.next(now: now) {
                order.append(task.name)
                running.append((task.name, now + UInt64(durations[task.name] ?? 10) * ms))
            }
            if scheduler.isFinished { break }
            guard let soonest = running.min(by: { $0.ends < $1.ends }) else { break }
            now = soonest.ends
            running.removeAll { $0.name == soonest.name }
            scheduler.finish(
                soonest.name, fail.contains(soonest.name) ? .failed : .done,
                reason: fail.contains(soonest.name) ? "boom" : nil, now: now)
        }
        return order
    }

    @Test("phases run in order; within a phase synchronous tasks go one at a time by priority")
    func phasesAndPriority() throws {
        var scheduler = try BootScheduler(
            tasks: [
                Self.task("b.low", priority: 1), Self.task("a.setup", phase: "setup"),
                Self.task("c.high", priority: 9), Self.task("d.launch", phase: "launcher"),
            ],
            phases: BootTask.defaultPhases, launchOptions: [:], now: 0)
        #expect(Self.run(&scheduler) == ["a.setup", "c.high", "b.low", "d.launch"])
        let high = try #require(scheduler.record("c.high"))
        let low = try #require(scheduler.record("b.low"))
        #expect(high.ended! <= low.started!, "synchronous tasks do not overlap")
    }

    @Test("asynchronous tasks overlap (up to the limit) while a synchronous one runs")
    func asynchronousOverlap() throws {
        var scheduler = try BootScheduler(
            tasks: [
                Self.task("a.one", async: true), Self.task("b.two", async: true),
                Self.task("c.three", async: true), Self.task("d.sync"),
            ],
            phases: BootTask.defaultPhases, launchOptions: [:], maximumConcurrent: 2, now: 0)
        let first = scheduler.next(now: 0).map(\.name)
        #expect(Set(first) == ["a.one", "b.two", "d.sync"])
        scheduler.finish("a.one", .done, reason: nil, now: 5 * Self.ms)
        #expect(scheduler.next(now: 5 * Self.ms).map(\.name) == ["c.three"])
    }

    @Test(
        "a required task that cannot run because what it depends on failed stops the boot; one skipped by a condition does not"
    )
    func requiredBlockedByFailure() throws {
        var blocked = try BootScheduler(
            tasks: [
                Self.task("a.keys", phase: "setup"),
                Self.task("a.session", phase: "setup", after: ["a.keys"]),
                Self.task("b.use", after: ["a.session"], required: true), Self.task("c.other"),
            ],
            phases: BootTask.defaultPhases, launchOptions: [:], now: 0)
        #expect(Self.run(&blocked, fail: ["a.keys"]) == ["a.keys"])
        #expect(
            blocked.failure
                == "required task b.use could not run: it depends on a.session, which was skipped")
        #expect(blocked.record("b.use")?.state == .finished(.skipped))
        blocked.skipWaiting(because: "the boot stopped", now: 0)
        #expect(blocked.record("c.other")?.state == .finished(.skipped))
        #expect(blocked.record("c.other")?.reason == "the boot stopped")
        var conditional = try BootScheduler(
            tasks: [
                Self.task("a.keys", phase: "setup", condition: .launchOption("keys")),
                Self.task("b.use", after: ["a.keys"], required: true),
            ],
            phases: BootTask.defaultPhases, launchOptions: [:], now: 0)
        #expect(Self.run(&conditional).isEmpty)
        #expect(conditional.failure == nil && conditional.isFinished)
        #expect(conditional.record("b.use")?.state == .finished(.skipped))
        // Whatever the order of its dependencies: a failure among them decides.
        var mixed = try BootScheduler(
            tasks: [
                Self.task("a.keys", phase: "setup", condition: .launchOption("keys")),
                Self.task("c.db", phase: "setup"),
                Self.task("b.use", after: ["a.keys", "c.db"], required: true),
            ],
            phases: BootTask.defaultPhases, launchOptions: [:], now: 0)
        _ = Self.run(&mixed, fail: ["c.db"])
        #expect(mixed.failure == "required task b.use could not run: it depends on c.db, which failed")
    }

    @Test("dependencies hold across processes and phases")
    func dependencies() throws {
        var scheduler = try BootScheduler(
            tasks: [
                Self.task("shell.skin", priority: 9, after: ["gateway.session"]),
                Self.task("gateway.session", phase: "setup", after: ["gateway.keys"]),
                Self.task("gateway.keys", phase: "setup", priority: -1), Self.task("push.start", priority: 5),
            ],
            phases: BootTask.defaultPhases, launchOptions: [:], now: 0)
        #expect(Self.run(&scheduler) == ["gateway.keys", "gateway.session", "shell.skin", "push.start"])
    }

    @Test(
        "a cycle, an unknown dependency or a dependency on a later phase is refused before anything runs",
        arguments: [
            (
                [task("a.x", after: ["b.y"]), task("b.y", after: ["c.z"]), task("c.z", after: ["a.x"])],
                "boot refused: dependency cycle: a.x → b.y → c.z → a.x"
            ),
            (
                [task("a.x", after: ["theme.load"])],
                "boot refused: unknown dependency: a.x needs theme.load, which no service declares"
            ),
            (
                [task("a.x", phase: "setup", after: ["b.y"]), task("b.y")],
                "boot refused: a.x (phase setup) depends on b.y, which runs in the later phase services"
            ),
            (
                [task("a.x", phase: "warmup")],
                "boot refused: a.x names the unknown phase 'warmup'; phases: setup, runOnce, services, autostart, launcher"
            ),
        ])
    func refusals(tasks: [BootTask], message: String) {
        #expect(throws: BootPlanError(message: message)) {
            _ = try BootScheduler(tasks: tasks, phases: BootTask.defaultPhases, launchOptions: [:], now: 0)
        }
    }

    @Test("a false condition skips a task with its reason, and what depends on it")
    func conditions() throws {
        var scheduler = try BootScheduler(
            tasks: [
                Self.task("push.register", condition: .launchOption("remoteNotification")),
                Self.task("push.badge", after: ["push.register"]),
                Self.task("url.deep", condition: .launchOption("url")),
            ],
            phases: BootTask.defaultPhases, launchOptions: ["url": "app://x"], now: 0)
        #expect(Self.run(&scheduler) == ["url.deep"])
        #expect(
            scheduler.record("push.register")?.reason
                == "condition: launch option 'remoteNotification' is not set")
        #expect(scheduler.record("push.badge")?.reason == "depends on push.register, which was skipped")
    }

    @Test("a failure skips its dependents; a required failure stops the boot")
    func failures() throws {
        var scheduler = try BootScheduler(
            tasks: [
                Self.task("a.flaky"), Self.task("b.after", after: ["a.flaky"]),
                Self.task("c.other", priority: -1),
            ],
            phases: BootTask.defaultPhases, launchOptions: [:], now: 0)
        #expect(Self.run(&scheduler, fail: ["a.flaky"]) == ["a.flaky", "c.other"])
        #expect(scheduler.record("b.after")?.reason == "depends on a.flaky, which failed")
        #expect(scheduler.failure == nil)

        var stopping = try BootScheduler(
            tasks: [Self.task("a.keys", phase: "setup", required: true), Self.task("b.later")],
            phases: BootTask.defaultPhases, launchOptions: [:], now: 0)
        #expect(Self.run(&stopping, fail: ["a.keys"]) == ["a.keys"])
        #expect(stopping.failure == "required task a.keys failed: boom")
        #expect(stopping.isFinished)
        #expect(stopping.record("b.later")?.state == .waiting)
    }

    @Test("a task past its deadline fails; a missing service's dependents are skipped")
    func deadlinesAndMissing() throws {
        var scheduler = try BootScheduler(
            tasks: [Self.task("a.slow", deadline: 50), Self.task("b.needs", after: ["push.start"])],
            phases: BootTask.defaultPhases,
            launchOptions: [:], missing: ["push"], now: 0)
        #expect(scheduler.next(now: 0).map(\.name) == ["a.slow"])
        #expect(scheduler.expire(now: 49 * Self.ms).isEmpty)
        #expect(scheduler.expire(now: 50 * Self.ms) == ["a.slow"])
        #expect(scheduler.record("a.slow")?.reason == "missed its deadline of 50 ms")
        #expect(
            scheduler.record("b.needs")?.reason
                == "depends on push.start, but the service push is not registered")
    }

    @Test("each task once per boot; run-once tasks once ever")
    func onceOnly() throws {
        var scheduler = try BootScheduler(
            tasks: [
                Self.task("a.migrate", phase: "runOnce", runOnce: true), Self.task("b.warm"),
                Self.task("c.start"),
            ],
            phases: BootTask.defaultPhases, launchOptions: [:], ranBefore: ["a.migrate"],
            ranOnDemand: ["b.warm"], now: 0)
        #expect(Self.run(&scheduler) == ["c.start"])
        #expect(scheduler.record("a.migrate")?.reason == "run-once: already ran in an earlier boot")
        #expect(scheduler.record("b.warm")?.reason == "already ran on demand in this boot")
    }

    @Test("the critical chain walks back from the last task to the first, each task once, past 0 ms tasks")
    func criticalChainPastInstantTasks() throws {
        var scheduler = try BootScheduler(
            tasks: [
                Self.task("analytics.start", priority: 5), Self.task("push.start", priority: 1),
                Self.task("gateway.start", priority: 9), Self.task("url.cache", async: true),
                Self.task("gateway.keys", phase: "setup"),
            ],
            phases: BootTask.defaultPhases, launchOptions: [:], now: 0)
        let order = Self.run(
            &scheduler,
            durations: ["gateway.keys": 40, "gateway.start": 30, "analytics.start": 0, "push.start": 0])
        #expect(order == ["gateway.keys", "gateway.start", "url.cache", "analytics.start", "push.start"])
        let chain = BootReport.criticalChain(BootReport.entries(scheduler), phases: BootTask.defaultPhases)
            .map(\.task.name)
        #expect(Set(chain).count == chain.count, "no task twice: \(chain)")
        #expect(chain == ["push.start", "analytics.start", "gateway.start", "gateway.keys"])
    }
}
