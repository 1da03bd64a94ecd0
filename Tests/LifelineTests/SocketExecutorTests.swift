import Dispatch
import Foundation
import Glibc
import LifelineSupport
import Synchronization
import Testing

@testable import Lifeline

/// The socket thread as a task executor, with a stand-in for the socket loop: a thread that runs the
/// executor's jobs whenever it is woken, as the loop does between its turns.
@Suite(
    "The socket thread as an executor: tasks run between the loop's turns; a held loop moves on",
    .timeLimit(.minutes(1)))
struct SocketExecutorTests {
    final class Logs: Sendable {
        private let lines = Mutex<[String]>([])
        func add(_ line: String) { lines.withLock { $0.append(line) } }
        var all: [String] { lines.withLock { $0 } }
    }

    /// The stand-in loops and what the executor said.
    final class Rig: Sendable {
        let owner = OwnerThread()
        let woken = DispatchSemaphore(value: 0)
        let logs = Logs()
        /// Each loop thread's id, by the token it runs as.
        let loops = Mutex<[UInt64: UInt]>([:])
        let stopped = Atomic<Bool>(false)
        let executor: SocketExecutor

        init() {
            let (woken, logs) = (self.woken, self.logs)
            executor = SocketExecutor(owner: owner, wake: { woken.signal() }, log: { logs.add($0) })
            executor.onTakeOver { [unowned self] token in self.startLoop(as: token) }
        }

        func startLoop(as token: UInt64) {
            let thread = Thread { [self] in
                owner.bindToCurrentThread()
                loops.withLock { $0[token] = UInt(pthread_self()) }
                while !stopped.load(ordering: .acquiring) {
                    guard executor.runJobs(as: token) else { return }
                    // Jobs queued by the jobs just run (no wake-up on the loop's own thread).
                    if !executor.hasJobs { woken.wait() }
                }
            }
            thread.start()
        }

        func loopThread(_ token: UInt64) -> UInt? { loops.withLock { $0[token] } }

        func stop() {
            stopped.store(true, ordering: .releasing)
            executor.close()
            for _ in 0..<8 { woken.signal() }
        }
    }

    private static func currentThread() -> UInt { UInt(pthread_self()) }

    @Test(
        "a task that prefers the executor runs on the loop's thread, and is resumed there after it suspends")
    func tasksRunOnTheLoopThread() async throws {
        let rig = Rig()
        defer { rig.stop() }
        let task = Task(executorPreference: rig.executor) { () -> [UInt] in
            let first = Self.currentThread()
            await Task.yield()
            return [first, Self.currentThread()]
        }
        #expect(rig.executor.hasJobs, "nothing runs it until the loop runs its jobs")
        rig.startLoop(as: 0)
        let threads = await task.value
        let loop = try #require(rig.loopThread(0))
        #expect(threads == [loop, loop])
        #expect(rig.logs.all.isEmpty)
    }

    @Test(
        "a job that holds the loop's thread past the limit: a new thread runs the loop, the held one leaves once its job returns, and while four are held jobs go to the pool"
    )
    func heldLoopMovesToANewThread() async throws {
        let rig = Rig()
        defer { rig.stop() }
        rig.startLoop(as: 0)
        let gate = DispatchSemaphore(value: 0)
        let started = DispatchSemaphore(value: 0)
        var held: [Task<UInt, Never>] = []
        for token in 0..<SocketExecutor.maximumHeld {
            held.append(
                Task(executorPreference: rig.executor) {
                    started.signal()
                    gate.wait()  // holds the loop's thread as long computation would
                    return Self.currentThread()
                })
            #expect(started.wait(timeout: .now() + 10) == .success)
            // An injected clock: the job has run for a second as far as the executor can tell.
            rig.executor.takeOverIfHeld(
                now: SystemClock.monotonicNanoseconds() + 1_000_000_000, limit: 1_000_000)
            #expect(rig.logs.all.count == Int(token) + 1)
            guard token + 1 < SocketExecutor.maximumHeld else { break }
            // The next task runs on the thread that took the loop over.
            let next = await Task(executorPreference: rig.executor) { Self.currentThread() }.value
            #expect(next == rig.loopThread(UInt64(token + 1)))
        }
        #expect(rig.logs.all.last?.contains("a task has held the socket thread for") == true)
        // Four threads are held: a new task runs on the Swift pool, on none of the loop threads.
        let pooled = await Task(executorPreference: rig.executor) { Self.currentThread() }.value
        let loopThreads = Set(rig.loops.withLock { Array($0.values) })
        #expect(!loopThreads.contains(pooled))
        for _ in held { gate.signal() }
        var heldThreads: [UInt] = []
        for task in held { heldThreads.append(await task.value) }
        #expect(heldThreads == (0..<UInt64(SocketExecutor.maximumHeld)).map { rig.loopThread($0) })
        // The held threads have left; the current loop runs tasks again.
        let last = UInt64(SocketExecutor.maximumHeld)
        var after = await Task(executorPreference: rig.executor) { Self.currentThread() }.value
        for _ in 0..<100 where after != rig.loopThread(last) {
            // A held thread decrements its count just after its task's value is delivered.
            try await Task.sleep(for: .milliseconds(10))
            after = await Task(executorPreference: rig.executor) { Self.currentThread() }.value
        }
        #expect(after == rig.loopThread(last))
    }

    @Test("a job that returns in time is not taken over")
    func quickJobStays() async throws {
        let rig = Rig()
        defer { rig.stop() }
        rig.startLoop(as: 0)
        _ = await Task(executorPreference: rig.executor) { Self.currentThread() }.value
        // The task's value is out a moment before its job has returned.
        for _ in 0..<1000 where rig.executor.isRunningJob { try await Task.sleep(for: .milliseconds(1)) }
        rig.executor.takeOverIfHeld(now: SystemClock.monotonicNanoseconds() + 1_000_000_000, limit: 1_000_000)
        #expect(rig.logs.all.isEmpty)
        #expect(rig.loopThread(1) == nil)
    }

    @Test(
        "the loop runs the jobs that wait when it looks, not those they queue: a task that keeps yielding leaves it its turns"
    )
    func jobsQueuedByJobsWaitForTheNextTurn() async throws {
        let rig = Rig()
        defer { rig.stop() }
        let task = Task(executorPreference: rig.executor) {
            for _ in 0..<3 { await Task.yield() }
        }
        let rounds = Mutex(0)
        let done = DispatchSemaphore(value: 0)
        let thread = Thread { [rig] in
            rig.owner.bindToCurrentThread()
            while rig.executor.hasJobs {
                _ = rig.executor.runJobs(as: 0)
                rounds.withLock { $0 += 1 }
            }
            done.signal()
        }
        thread.start()
        #expect(done.wait(timeout: .now() + 10) == .success)
        await task.value
        #expect(
            rounds.withLock { $0 } >= 4,
            "turns \(rounds.withLock { $0 }): each continuation the task queued waited for a turn of its own")
    }

    @Test(
        "jobs that waited while the last thread the cap allows was taken over go to the pool, not to the new loop"
    )
    func jobsWaitingAtTheCapGoToThePool() async throws {
        let rig = Rig()
        defer { rig.stop() }
        rig.startLoop(as: 0)
        let gate = DispatchSemaphore(value: 0)
        let started = DispatchSemaphore(value: 0)
        var held: [Task<Void, Never>] = []
        for _ in 0..<SocketExecutor.maximumHeld {
            held.append(
                Task(executorPreference: rig.executor) {
                    started.signal()
                    gate.wait()
                })
            #expect(started.wait(timeout: .now() + 10) == .success)
            if held.count == SocketExecutor.maximumHeld { break }
            rig.executor.takeOverIfHeld(
                now: SystemClock.monotonicNanoseconds() + 1_000_000_000, limit: 1_000_000)
        }
        // Queued behind the job that holds the loop now, while one more thread may still be held.
        let waiting = Task(executorPreference: rig.executor) { Self.currentThread() }
        rig.executor.takeOverIfHeld(now: SystemClock.monotonicNanoseconds() + 1_000_000_000, limit: 1_000_000)
        let ranOn = await waiting.value
        let loopThreads = Set(rig.loops.withLock { Array($0.values) })
        #expect(!loopThreads.contains(ranOn))
        #expect(rig.logs.all.count == SocketExecutor.maximumHeld)
        for _ in held { gate.signal() }
        for task in held { await task.value }
    }

    @Test("a clock read before the job started does not count as a held thread")
    func earlierClockIsNotAHold() async throws {
        let rig = Rig()
        defer { rig.stop() }
        rig.startLoop(as: 0)
        let gate = DispatchSemaphore(value: 0)
        let started = DispatchSemaphore(value: 0)
        let task = Task(executorPreference: rig.executor) {
            started.signal()
            gate.wait()
        }
        #expect(started.wait(timeout: .now() + 10) == .success)
        rig.executor.takeOverIfHeld(now: 1, limit: 1_000_000)
        #expect(rig.logs.all.isEmpty)
        gate.signal()
        await task.value
    }
}
