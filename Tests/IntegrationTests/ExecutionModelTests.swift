import Foundation
import Lifeline
import LifelineProtocol
import Synchronization
import Testing

/// Set once, read from any task.
final class Flag: Sendable {
    private let value = Mutex(false)
    func set() { value.withLock { $0 = true } }
    var isFinished: Bool { value.withLock { $0 } }
}

/// Where a service's code runs, tried with real processes: a slow method's task is moved off the
/// socket thread's loop (another thread takes the loop over) and slow event handlers hold only the
/// handler thread, so neither stops heartbeats; an inline one that blocks is reported by name.
@Suite(
    "Real processes: a busy service stays alive, a blocking inline handler is named", .serialized,
    .timeLimit(.minutes(1)))
struct ExecutionModelTests {
    @Test(
        "a method that computes for 10 s (after an await, or from its first instruction): the service stays registered, answers other calls and handles events meanwhile, and the call returns 200",
        arguments: [true, false])
    func busyMethod(awaitsFirst: Bool) async throws {
        let broker = try await BrokerProcess()
        defer { broker.process.kill() }
        let probe = try await broker.service(
            "lifeline-probe", ["--name", "busy", "--events", "com.example.tick"])
        defer { probe.kill() }
        let client = LifelineClient(broker: broker.control)
        let spinning = Flag()
        let spin = Task {
            defer { spinning.set() }
            return try await client.call(
                "busy", "spin", ["ms": 10_000, "await": .bool(awaitsFirst)], timeout: .seconds(40))
        }
        // The spin has started once its 1 ms sleep is over; give the call a moment to arrive. Rounds
        // are taken in its first 5 s: a loaded machine that starves the service for seconds still
        // leaves it 5 s to answer within the computation.
        let started = ContinuousClock.now
        var answeredDuring: [Duration] = []
        var registeredThroughout = true
        var published = 0
        // Rounds whose event was handled while the call still computed (a loaded machine may
        // finish fewer rounds, not none).
        var handledDuring = 0
        while ContinuousClock.now - started < .seconds(5) && !spinning.isFinished {
            let asked = ContinuousClock.now
            let echo = try await client.call("busy", "echo", ["n": .int(Int64(answeredDuring.count))])
            answeredDuring.append(ContinuousClock.now - asked)
            #expect(echo["n"]?.intValue == Int64(answeredDuring.count - 1))
            try await client.publish("com.example.tick", ["n": .int(Int64(published))])
            // The next round starts once the service has handled this event: bus events go on too.
            try await probe.waitForLine(seconds: 10) { [published] in
                $0.hasPrefix("EVENT ") && $0.contains(#""event":"com.example.tick""#)
                    && $0.contains(#""n":\#(published)}"#)
            }
            published += 1
            if !spinning.isFinished { handledDuring = published }
            let services = try await client.services()
            if !services.contains(where: { $0.name == "busy" }) { registeredThroughout = false }
        }
        #expect(handledDuring >= 2, "bus events were handled while it computed")
        let answer = try await spin.value
        #expect(answer["spun"] == 10_000, "the 10 s call returns 200 with its answer")
        #expect(registeredThroughout, "the broker never dropped the busy service")
        #expect(answeredDuring.count >= 2, "other calls were answered while it computed")
        let slowest = answeredDuring.max() ?? .zero
        print(
            "during the 10 s computation: \(answeredDuring.count) calls answered (slowest \(slowest)), \(handledDuring) events handled"
        )
        #expect(!probe.lines(.stderr).contains { $0.contains("expired") || $0.contains("registered again") })
        // The method's task ran on the socket thread until it held it: another thread took over.
        #expect(probe.lines(.stderr).contains { $0.contains("a task has held the socket thread for") })
        let stopped = broker.process.lines(.stderr).contains {
            $0.contains("service busy") && $0.contains("expired")
        }
        #expect(!stopped)
    }

    @Test(
        "an inline method that blocks past the heartbeat interval is reported by name, and the service goes on"
    )
    func blockingInlineMethodIsNamed() async throws {
        let broker = try await BrokerProcess()
        defer { broker.process.kill() }
        let probe = try await broker.service("lifeline-probe", ["--name", "blocky"])
        defer { probe.kill() }
        let client = LifelineClient(broker: broker.control)
        let answer = try await client.call("blocky", "block", ["ms": 1600], timeout: .seconds(10))
        #expect(answer["blocked"] == 1600)
        try await probe.waitForLine(.stderr) {
            $0.contains("warning")
                && $0.contains("the inline method blocky.block has held the socket thread for")
                && $0.contains(
                    "give slow work to .on (the service's handler thread) or .method (a method that holds the socket thread has the loop moved to another one)"
                )
        }
        try await probe.waitForLine(.stderr) {
            $0.contains("the inline method blocky.block returned after")
        }
        #expect(try await client.call("blocky", "echo", ["ok": true])["ok"] == true)
    }
}
