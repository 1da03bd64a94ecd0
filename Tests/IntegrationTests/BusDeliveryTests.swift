import Foundation
import Lifeline
import LifelineProtocol
import Testing

@Suite("Real processes: bus delivery, publish, lookup, calls", .serialized, .timeLimit(.minutes(2)))
struct BusDeliveryTests {
    /// The EVENT lines a probe printed, as (event, payload) pairs.
    static func events(of probe: ChildProcess) throws -> [(String, JSONValue)] {
        try probe.lines().filter { $0.hasPrefix("EVENT ") }.map { line in
            let json = try JSONParser.parse(String(line.dropFirst(6)))
            return (json["event"]?.stringValue ?? "", json["payload"] ?? .null)
        }
    }

    @Test("a service receives exactly the events it subscribes to, never one that merely shares a prefix")
    func exactSubscriptions() async throws {
        let broker = try await BrokerProcess()
        let probe = try await broker.service("lifeline-probe", ["--events", "shop.cart,didEnterBackground"])
        let client = LifelineClient(broker: broker.control)
        defer { probe.kill(); broker.process.kill() }

        #expect(try await client.publish(.didFinishLaunching).subscribers == 0)
        #expect(try await client.publish("shop.cartDidChange", ["n": 1]).subscribers == 0)
        #expect(try await client.publish("shop.car", ["n": 2]).subscribers == 0)
        #expect(try await client.publish("shop.cart", ["n": 3]).subscribers == 1)
        #expect(try await client.publish(.openURL, ["url": "app://x"]).subscribers == 0)
        #expect(try await client.publish(.didEnterBackground, ["n": 4]).subscribers == 1)
        try await client.publish("shop.cart", ["last": true])
        try await probe.waitForLine { $0.contains("\"last\":true") }

        let received = try Self.events(of: probe)
        #expect(received.map(\.0) == ["shop.cart", "didEnterBackground", "shop.cart"])
        #expect(received.map(\.1) == [["n": 3], ["n": 4], ["last": true]])
        await client.close()
    }

    @Test(
        "publish(contentsOf:) delivers every event of its batches once and in order, to services and raw subscribers"
    )
    func batches() async throws {
        let broker = try await BrokerProcess()
        let probe = try await broker.service("lifeline-probe", ["--events", "shop.tick"])
        let client = LifelineClient(broker: broker.control)
        defer { probe.kill(); broker.process.kill() }
        let watcher = try blockingClient(broker: broker.control, credentials: nil)
        let subscriber = try watcher.subscribe(to: ["shop.tick"])

        let count = 3000
        let receipts = try await client.publish(
            contentsOf: (0..<count).map { PublishedEvent("shop.tick", ["n": .int(Int64($0))]) },
            batchSize: 250,
            window: 4)
        #expect(receipts.count == 12 && receipts.map(\.count) == Array(repeating: 250, count: 12))
        #expect(zip(receipts, receipts.dropFirst()).allSatisfy { $1.firstSequence == $0.sequence + 1 })
        try await probe.waitForLine(seconds: 30) { $0.contains("\"n\":\(count - 1)}") }
        let received = try Self.events(of: probe).filter { $0.0 == "shop.tick" }.map {
            $0.1["n"]?.intValue ?? -1
        }
        #expect(received == (0..<count).map(Int64.init))
        var seen: [UInt64] = []
        while seen.count < count, let message = try subscriber.next(timeout: .seconds(10)) {
            seen.append(message.header.topicSequence)
        }
        #expect(seen == (1...UInt64(count)).map { $0 })
        await client.close()
    }

    @Test("publish reports how many registered services subscribe, from the CLI too")
    func subscriberCount() async throws {
        let broker = try await BrokerProcess()
        let first = try await broker.service(
            "lifeline-probe", ["--name", "one", "--events", "didBecomeActive,willTerminate"])
        let second = try await broker.service(
            "lifeline-probe", ["--name", "two", "--events", "didBecomeActive"])
        defer { first.kill(); second.kill(); broker.process.kill() }

        #expect(try await broker.cli(["publish", "didFinishLaunching"]).status == 0)
        let active = try await broker.cli(["publish", "didBecomeActive", "--json"])
        #expect(active.status == 0)
        #expect(try JSONParser.parse(active.output)["subscribers"] == 2)
        let terminate = try await broker.cli(["publish", "willTerminate", "--no-ack"])
        #expect(terminate.stdout.first?.hasSuffix("to 1 subscribed service") == true)
        #expect(terminate.stdout.last == "lifecycle: active → terminating")
        try await first.waitForLine { $0.contains("willTerminate") }
        try await second.waitForLine { $0.contains("didBecomeActive") }
    }

    @Test("lookup finds a service, and says not-found with exit status 1")
    func lookup() async throws {
        let broker = try await BrokerProcess()
        let probe = try await broker.service("lifeline-probe", ["--name", "finder", "--events", "openURL"])
        defer { probe.kill(); broker.process.kill() }

        let found = try await broker.cli(["lookup", "finder", "--json"])
        #expect(found.status == 0)
        let record = try ServiceRecord(json: JSONParser.parse(found.output))
        #expect(record.registration.pid == Int(probe.pid))
        #expect(record.registration.events == [.openURL])
        #expect(
            record.registration.methods == [
                "block", "compute", "echo", "fail", "register", "sleep", "spin", "unregister", "whoami",
            ])

        let missing = try await broker.cli(["lookup", "nobody"])
        #expect(missing.status == 1)
        #expect(missing.errors == "lifeline lookup: no service named 'nobody'")
    }

    @Test("a call round-trips; errors pass through unchanged; an unanswered call times out on time")
    func calls() async throws {
        let broker = try await BrokerProcess()
        let probe = try await broker.service("lifeline-probe")
        let client = LifelineClient(broker: broker.control)
        defer { probe.kill(); broker.process.kill() }

        #expect(try await client.call("probe", "echo", ["x": [1, "two"]]) == ["x": [1, "two"]])
        let echoed = try await broker.cli(["call", "probe", "echo", #"{"a":"é"}"#])
        #expect(echoed.status == 0 && echoed.output == #"{"a":"é"}"#)

        let failure = await #expect(throws: LifelineError.self) {
            try await client.call("probe", "fail", ["status": 418, "message": "I am a teapot"])
        }
        #expect(failure?.status.rawValue == 418)
        #expect(failure?.body == ["error": "I am a teapot", "probe": true])

        let unknown = try await broker.cli(["call", "probe", "nope"])
        #expect(unknown.status == 1)
        #expect(
            unknown.errors.contains(
                "service 'probe' has no method 'nope'; it answers: block, compute, echo, fail, register, sleep, spin, unregister, whoami"
            ))
        let noService = try await broker.cli(["call", "ghost", "echo"])
        #expect(noService.status == 1 && noService.errors.contains("no service named 'ghost'"))

        let started = ContinuousClock.now
        let timeout = await #expect(throws: LifelineError.self) {
            try await client.call("probe", "sleep", ["ms": 3000], timeout: .milliseconds(300))
        }
        let elapsed = ContinuousClock.now - started
        #expect(timeout?.status == .timeout)
        #expect(timeout?.message == "probe.sleep did not answer within 300 ms")
        #expect(elapsed >= .milliseconds(300))
        print("unanswered call returned 504 after \(elapsed) (deadline 300 ms)")
        await client.close()
    }
}
