import Foundation
import Lifeline
import LifelineProtocol
import Synchronization
import Testing

@Suite(
    "Real processes: coalesced publishing against the one-by-one path", .serialized, .timeLimit(.minutes(2)))
struct CoalescedPublishTests {
    /// The event name of the `index`th event: two names, so batches mix them.
    static func name(_ index: Int) -> EventName { index % 3 == 0 ? "shop.b" : "shop.a" }

    /// The broker's count of control requests, from /metrics.
    static func requests(port: UInt16) throws -> Double {
        let body = try MetricsTests.get(port: port, "/metrics").1
        let line = try #require(
            body.split(separator: "\n").first { $0.hasPrefix("lifeline_requests_total ") })
        return try #require(Double(line.split(separator: " ")[1]))
    }

    @Test(
        "publishes from many tasks get the receipts one-by-one publishes get; a loop of posts arrives whole, in order, in few PUBLISHes"
    )
    func differential() async throws {
        let broker = try await BrokerProcess(["--metrics", "127.0.0.1:0"])
        let line = try await broker.process.waitForLine(.stderr) {
            $0.contains("Prometheus metrics on http://")
        }
        let port = try #require(UInt16(line.split(separator: ":").last?.split(separator: "/").first ?? ""))
        let onlyA = try await broker.service("lifeline-probe", ["--name", "only-a", "--events", "shop.a"])
        let both = try await broker.service(
            "lifeline-probe", ["--name", "both", "--events", "shop.a,shop.b"])
        let client = LifelineClient(broker: broker.control)
        defer { onlyA.kill(); both.kill(); broker.process.kill() }
        let watcher = try blockingClient(broker: broker.control, credentials: nil)
        let subscriber = try watcher.subscribe(to: ["shop.a", "shop.b"])

        // The general path: one PUBLISH per event, each awaited before the next.
        let count = 300
        var general: [PublishReceipt] = []
        for index in 0..<count {
            general.append(
                try await client.publish(Self.name(index), ["n": .int(Int64(index)), "path": "general"]))
        }
        #expect(general.map(\.subscribers) == (0..<count).map { Self.name($0) == "shop.a" ? 2 : 1 })

        // The same events from as many tasks at once: coalesced, each with its own receipt.
        let coalesced: [PublishReceipt] = try await withThrowingTaskGroup(
            of: Dictionary<Int, PublishReceipt>.self
        ) { group in
            for index in 0..<count {
                group.addTask {
                    let receipt = try await client.publish(
                        Self.name(index), ["n": .int(Int64(index)), "path": "tasks"])
                    return [index: receipt]
                }
            }
            var receipts: [Int: PublishReceipt] = [:]
            for try await one in group { receipts.merge(one) { $1 } }
            return (0..<count).map { receipts[$0]! }
        }
        #expect(coalesced.map(\.event) == general.map(\.event))
        #expect(coalesced.map(\.subscribers) == general.map(\.subscribers))
        #expect(coalesced.map(\.lifecycle) == general.map(\.lifecycle))
        let last = general[count - 1].sequence
        let expected = Set((last + 1)...(last + UInt64(count)))
        #expect(Set(coalesced.map(\.sequence)) == expected)

        // A loop of posts, then flush.
        let posts = 3000
        let requestsBefore = try Self.requests(port: port)
        for index in 0..<posts {
            await client.post(Self.name(index), ["n": .int(Int64(index)), "path": "posts"])
        }
        try await client.flush()
        let requests = try Self.requests(port: port) - requestsBefore
        print("coalesced: \(posts) posts left in \(Int(requests)) control requests")
        #expect(requests < Double(posts / 10))

        // What the bus carried: every receipt names the event its sequence carries.
        var seen: [UInt64: (String, JSONValue)] = [:]
        let total = 2 * count + posts
        while seen.count < total, let message = try subscriber.next(timeout: .seconds(10)) {
            seen[message.header.sequence] = (message.name.rawValue, try JSONParser.parse(message.payload))
        }
        #expect(seen.count == total)
        for (index, receipt) in coalesced.enumerated() {
            let carried = try #require(seen[receipt.sequence])
            #expect(carried.0 == receipt.event.rawValue && carried.1["n"]?.intValue == Int64(index))
            #expect(carried.1["path"] == "tasks")
        }
        let postedOrder = seen.sorted { $0.key < $1.key }.filter { $0.value.1["path"] == "posts" }
        #expect(postedOrder.map { $0.value.1["n"]?.intValue ?? -1 } == (0..<posts).map(Int64.init))
        #expect(postedOrder.map(\.value.0) == (0..<posts).map { Self.name($0).rawValue })

        // The services saw the posts in order, each only its own names.
        try await both.waitForLine(seconds: 30) { $0.contains("\"n\":\(posts - 1),\"path\":\"posts\"") }
        let bothPosts = try BusDeliveryTests.events(of: both).filter { $0.1["path"] == "posts" }
        #expect(bothPosts.map { $0.1["n"]?.intValue ?? -1 } == (0..<posts).map(Int64.init))
        let lastA = (0..<posts).last { Self.name($0) == "shop.a" }!
        try await onlyA.waitForLine(seconds: 30) { $0.contains("\"n\":\(lastA),\"path\":\"posts\"") }
        let onlyAPosts = try BusDeliveryTests.events(of: onlyA).filter { $0.1["path"] == "posts" }
        #expect(
            onlyAPosts.map { $0.1["n"]?.intValue ?? -1 }
                == (0..<posts).filter { Self.name($0) == "shop.a" }.map(Int64.init))
        await client.close()
    }

    @Test(
        "acknowledged publishes from many tasks are in flight together: all on the bus before any is answered"
    )
    func acknowledgedPipelined() async throws {
        let broker = try await BrokerProcess()
        let slow = try await broker.service(
            "lifeline-probe", ["--name", "slow", "--events", "shop.ack", "--delay-ms", "60000"])
        let client = LifelineClient(broker: broker.control)
        defer { slow.kill(); broker.process.kill() }
        let watcher = try blockingClient(broker: broker.control, credentials: nil)
        let subscriber = try watcher.subscribe(to: ["shop.ack"])
        let count = 10
        let answered = AnswerCount()
        let publishes = (0..<count).map { index in
            Task {
                let receipt = try await client.publish(
                    "shop.ack", ["n": .int(Int64(index))], acknowledged: true, timeout: .seconds(60))
                answered.value.add(1, ordering: .relaxed)
                return receipt
            }
        }
        var onTheBus = 0
        while onTheBus < count, try subscriber.next(timeout: .seconds(10)) != nil { onTheBus += 1 }
        // The handler holds the first event for a minute and the broker waits 5 s for an ACK: a
        // publisher that sent one at a time would have had none of the others on the bus by now.
        let answeredEarly = answered.value.load(ordering: .relaxed)
        #expect(onTheBus == count && answeredEarly == 0, "every PUBLISH is out before any is answered")
        // The service's death answers them all at once.
        slow.kill(SIGKILL)
        var sequences: Set<UInt64> = []
        for publish in publishes {
            let receipt = try await publish.value
            sequences.insert(receipt.sequence)
            #expect(receipt.missing.map(\.service) == ["slow"] && receipt.acknowledged == [])
        }
        #expect(sequences.count == count)
        await client.close()
    }

    @Test("a post the broker refuses is reported by flush, naming it; the posts around it are published")
    func refusedPost() async throws {
        let broker = try await BrokerProcess()
        let client = LifelineClient(broker: broker.control)
        defer { broker.process.kill() }
        let watcher = try blockingClient(broker: broker.control, credentials: nil)
        let subscriber = try watcher.subscribe(to: ["shop.a"])
        for index in 0..<100 { await client.post("shop.a", ["n": .int(Int64(index))]) }
        await client.post(.openURL, ["no-url": true])
        for index in 100..<200 { await client.post("shop.a", ["n": .int(Int64(index))]) }
        do {
            try await client.flush()
            Issue.record("flush did not report the refused post")
        } catch let error as LifelineError {
            #expect(error.status == .unprocessable)
            #expect(error.message == "posting 'openURL': openURL needs the field 'url' (the URL to open)")
        }
        try await client.flush()
        var seen: [Int64] = []
        while seen.count < 200, let message = try subscriber.next(timeout: .seconds(10)) {
            seen.append(try JSONParser.parse(message.payload)["n"]?.intValue ?? -1)
        }
        #expect(seen == (0..<200).map(Int64.init))
        await client.close()
    }
}

/// How many publishes have been answered, shared with the tasks that make them.
private final class AnswerCount: Sendable {
    let value = Atomic<Int>(0)
}
