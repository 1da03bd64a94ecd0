import Synchronization
import Testing

@testable import Lifeline

@Suite(
    "Actors by key in one instance: one activation per key, idle keys, deactivation", .timeLimit(.minutes(1)))
struct KeyedActivationsTests {
    /// Counts the activations each key had.
    final class Maker: Sendable {
        let made = Mutex<[String: Int]>([:])

        func make(_ key: String) async throws -> String {
            try await Task.sleep(for: .milliseconds(5))  // an activation that suspends
            return made.withLock { made in
                made[key, default: 0] += 1
                return "\(key)#\(made[key]!)"
            }
        }
    }

    @Test("concurrent first calls to a key share one activation; other keys get their own")
    func oneActivation() async throws {
        let activations = KeyedActivations<String>()
        let maker = Maker()
        let actors = try await withThrowingTaskGroup(of: String.self) { group in
            for index in 0..<20 {
                let key = index % 2 == 0 ? "ana" : "bob"
                group.addTask {
                    let actor = try await activations.acquire(key) { try await maker.make(key) }
                    activations.finish(key)
                    return actor
                }
            }
            return try await group.reduce(into: Set<String>()) { $0.insert($1) }
        }
        #expect(actors == ["ana#1", "bob#1"])
        #expect(maker.made.withLock { $0 } == ["ana": 1, "bob": 1])
        #expect(activations.keys == ["ana", "bob"])
    }

    @Test("a failed activation leaves nothing: the next call activates again")
    func failedActivation() async throws {
        let activations = KeyedActivations<String>()
        struct Broken: Error {}
        await #expect(throws: Broken.self) { try await activations.acquire("ana") { throw Broken() } }
        #expect(!activations.holds("ana") && activations.keys.isEmpty)
        #expect(try await activations.acquire("ana") { "ana#2" } == "ana#2")
    }

    @Test("idle keys are those with no call running since the cutoff; a running call keeps its key")
    func idleAndDeactivation() async throws {
        let activations = KeyedActivations<String>()
        _ = try await activations.acquire("ana") { "ana" }
        _ = try await activations.acquire("bob") { "bob" }
        activations.finish("bob")
        let later = ContinuousClock.now + .seconds(1)
        #expect(activations.idle(since: later) == ["bob"], "ana has a call running")
        #expect(activations.beginDeactivation(of: "ana") == nil, "not while a call runs on it")
        #expect(activations.beginDeactivation(of: "ana", force: true) == "ana", "unless forced (fencing)")
        // A call to a key being deactivated waits, then activates it anew.
        let waiting = Task { try await activations.acquire("ana") { "ana#2" } }
        // Lets the call reach its wait; the test holds either way.
        try await Task.sleep(for: .milliseconds(20))
        activations.endDeactivation(of: "ana")
        #expect(try await waiting.value == "ana#2")
    }

    @Test(
        "while suspended (the broker silent) or closed (leaving), no key is activated; active ones still serve"
    )
    func suspendedAndClosed() async throws {
        let activations = KeyedActivations<String>()
        _ = try await activations.acquire("ana") { "ana" }
        activations.suspend("silent broker")
        #expect(try await activations.acquire("ana") { "other" } == "ana")
        do {
            _ = try await activations.acquire("bob") { "bob" }
            Issue.record("bob was activated while suspended")
        } catch let error as ServiceError {
            #expect(error.status == .unavailable && error.message == "silent broker")
        }
        activations.suspend(nil)
        #expect(try await activations.acquire("bob") { "bob" } == "bob")
        activations.close("leaving")
        await #expect(throws: ServiceError.self) { try await activations.acquire("eve") { "eve" } }
    }
}
