import Lifeline
import LifelineTesting
import Synchronization
import TestSupport
import Testing

/// Handlers written without `await` run inside the delivery (`onInline`, `methodInline`); the same
/// handlers registered the default way run queued, off the socket thread. What a service does must
/// not depend on which: the same events reach the handlers in the same order with the same fields,
/// the same failures come back as the same acknowledgements and answers.
@Suite("Inline handlers against the queued path, seeded", .timeLimit(.minutes(1)))
struct InlineAgainstQueuedTests {
    struct Refused: Error, CustomStringConvertible {
        let key: Int64
        var description: String { "refused \(key)" }
    }

    /// What the handlers read, in the order they ran.
    final class Journal: Sendable {
        let lines = Mutex<[String]>([])
    }

    /// One handler body for both registrations: records what it read, fails when asked to.
    static func handle(_ event: Event, into journal: Journal) throws {
        let key = event["k"]?.intValue ?? -1
        let tags = event.payload["tags"]?.arrayValue?.count ?? 0
        journal.lines.withLock {
            $0.append(
                "\(event.name) k=\(key) tags=\(tags) seq=\(event.sequence) topic=\(event.topicSequence)")
        }
        if event["fail"] == true { throw Refused(key: key) }
    }

    static func answer(_ call: CallRequest) throws -> JSONValue {
        if call.body["fail"] == true { throw ServiceError(.conflict, "refused \(call.body["k"] ?? .null)") }
        return ["k": call.body["k"] ?? .null, "method": .string(call.method)]
    }

    static func service(inline: Bool, journal: Journal) -> Service {
        var service = Service("differential")
        for name: EventName in ["app.x", "app.y"] {
            service =
                inline
                ? service.onInline(name) { try handle($0, into: journal) }
                : service.on(name) { try handle($0, into: journal) }
        }
        return inline
            ? service.methodInline("echo") { try answer($0) } : service.method("echo") { try answer($0) }
    }

    /// What a step gave: the acknowledgement's or the answer's words.
    static func outcome(_ work: () async throws -> String) async -> String {
        do { return try await work() } catch { return "failed: \(error)" }
    }

    @Test(
        "property, seeded: the same script of events and calls gives the same journal and the same outcomes")
    func sameOutcomes() async throws {
        var generator = SeededGenerator()
        var script: [(call: Bool, name: EventName, payload: JSONValue)] = []
        for index in 0..<120 {
            var members: [String: JSONValue] = ["k": .int(Int64(index))]
            if Int.random(in: 0..<5, using: &generator) == 0 { members["fail"] = true }
            if Bool.random(using: &generator) { members["tags"] = ["a", "b"] }
            let payload: JSONValue =
                Int.random(in: 0..<10, using: &generator) == 0 ? [.int(Int64(index))] : .object(members)
            script.append(
                (
                    Int.random(in: 0..<4, using: &generator) == 0,
                    Bool.random(using: &generator) ? "app.x" : "app.y", payload
                ))
        }
        var results: [(journal: [String], outcomes: [String])] = []
        for inline in [true, false] {
            let journal = Journal()
            let host = try await ServiceTestHost(Self.service(inline: inline, journal: journal))
            var outcomes: [String] = []
            for step in script {
                outcomes.append(
                    await Self.outcome {
                        step.call
                            ? "\(try await host.call("echo", step.payload))"
                            : "handled \(try await host.publish(step.name, step.payload))"
                    })
            }
            try await host.stop()
            results.append((journal.lines.withLock { $0 }, outcomes))
        }
        #expect(results[0].outcomes == results[1].outcomes, "\(generator.replay)")
        #expect(results[0].journal == results[1].journal, "\(generator.replay)")
        #expect(results[0].journal.count == script.filter { !$0.call }.count)
        #expect(results[0].outcomes.contains { $0.hasPrefix("failed") }, "the script has failures")
        #expect(results[0].outcomes.contains { $0.contains("echo") }, "and answered calls")
    }
}
