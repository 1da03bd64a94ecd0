import LifelineProtocol
import Synchronization
import Testing

@testable import Lifeline

@Suite(
    "Cancellation: a cancelled task stops waiting at once; a cancelled service leaves",
    .timeLimit(.minutes(1)))
struct CancellationTests {
    /// A client over an in-memory connection whose broker never answers.
    static func silentClient() -> (LifelineClient, InMemoryConnection) {
        let connection = InMemoryConnection()
        let client = LifelineClient(brokerEndpoint: "inproc://none", deliver: { _ in }) { pending, sink in
            connection.attach(pending, sink)
            return connection
        }
        return (client, connection)
    }

    @Test(
        "a call, a publish and an acknowledged publish of a cancelled task end with CancellationError, long before their timeouts"
    )
    func requests() async throws {
        let (client, connection) = Self.silentClient()
        // Deadlines of an hour: ending inside the suite's one-minute limit, with CancellationError
        // rather than a time-out, shows none of them waited its deadline out.
        let call = Task { try await client.call("svc", "slow", timeout: .seconds(3600)) }
        let publish = Task { try await client.publish("com.example.x", timeout: .seconds(3600)) }
        let acknowledged = Task {
            try await client.publish("com.example.y", acknowledged: true, timeout: .seconds(3600))
        }
        // Each has reached the connection (the broker is silent), then its task is cancelled.
        for _ in 0..<2 { _ = await connection.nextCommand() }
        call.cancel()
        publish.cancel()
        await #expect(throws: CancellationError.self) { try await call.value }
        await #expect(throws: CancellationError.self) { try await publish.value }
        acknowledged.cancel()
        await #expect(throws: CancellationError.self) { try await acknowledged.value }
        // A task cancelled before it asks sends nothing and ends at once.
        let early = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            return try await client.call("svc", "never")
        }
        await #expect(throws: CancellationError.self) { try await early.value }
    }

    @Test(
        "a cancelled call or acknowledged publish is given back: the connection is told to forget its ticket"
    )
    func releases() async throws {
        let (client, connection) = Self.silentClient()
        let requests: [@Sendable () async throws -> Void] = [
            { _ = try await client.call("svc", "slow", timeout: .seconds(3600)) },
            { _ = try await client.publish("com.example.y", acknowledged: true, timeout: .seconds(3600)) },
        ]
        for request in requests {
            let task = Task { try await request() }
            guard case .request(_, let ticket, _) = await connection.nextCommand() else {
                Issue.record("the request was not sent")
                return
            }
            task.cancel()
            await #expect(throws: CancellationError.self) { try await task.value }
            guard case .cancel(let forgotten) = await connection.nextCommand() else {
                Issue.record("no cancel command followed")
                return
            }
            #expect(forgotten == ticket)
        }
    }

    @Test("a cancelled publish that waits its turn leaves the queue: it is never sent")
    func withdrawnPublish() async throws {
        let (client, connection) = Self.silentClient()
        let first = Task { try await client.publish("com.example.first", timeout: .seconds(3600)) }
        guard case .request(_, let ticket, _) = await connection.nextCommand() else {
            Issue.record("the first publish was not sent")
            return
        }
        let second = Task { try await client.publish("com.example.second", timeout: .seconds(3600)) }
        while client.publishing.queuedEvents == 0 { await Task.yield() }  // queued behind the first
        second.cancel()
        await #expect(throws: CancellationError.self) { try await second.value }
        #expect(client.publishing.queuedEvents == 0, "withdrawn from the queue")
        // The first is answered; the next PUBLISH carries only what came after, not the withdrawn one.
        connection.deliver(
            .completion(
                ticket: ticket,
                .success(
                    ControlReply(
                        requestID: [],
                        json: ["event": "com.example.first", "sequence": 1, "epoch": 1, "subscribers": 0]))))
        _ = try await first.value
        let third = Task { try await client.publish("com.example.third", timeout: .seconds(3600)) }
        guard case .request(.publish(let next), _, _) = await connection.nextCommand() else {
            Issue.record("the third publish was not sent")
            return
        }
        #expect(next.events.map(\.name) == ["com.example.third"])
        third.cancel()
    }

    @Test("flush of a cancelled task ends with CancellationError; what was posted is still sent")
    func flush() async throws {
        let (client, connection) = Self.silentClient()
        await client.post("com.example.x", timeout: .seconds(3600))
        let flush = Task { try await client.flush() }
        guard case .request(let publish, _, _) = await connection.nextCommand() else {
            Issue.record("the posted event was not sent")
            return
        }
        #expect(publish.command == .publish)
        flush.cancel()
        await #expect(throws: CancellationError.self) { try await flush.value }
    }

    @Test(
        "cancelling Service.run() leaves as stop() does: willDestroy, the connection shut down (UNREGISTER), the handler in flight drained, then run() returns"
    )
    func serviceRun() async throws {
        let journal = Journal()
        let (gate, open) = AsyncStream<Void>.makeStream()
        let service = Service("svc")
            .on("app.tick") { _ in
                journal.add("handler started")
                for await _ in gate { break }
                journal.add("handler done")
            }
            .willDestroy { _ in journal.add("willDestroy") }
        let host = await HostHarness(service)
        host.event("app.tick", sequence: 1)
        while !journal.all.contains("handler started") { try await Task.sleep(for: .milliseconds(1)) }
        host.running.cancel()
        // The connection is told to shut down, which sends UNREGISTER, while the handler still runs.
        guard case .shutdown = await host.connection.nextCommand() else {
            Issue.record("leaving did not shut the connection down")
            return
        }
        #expect(journal.all == ["handler started", "willDestroy"])
        open.yield()
        try await host.running.value
        #expect(
            journal.all == ["handler started", "willDestroy", "handler done"], "run() waits for the handler")
        await host.connection.finished()
    }
}
