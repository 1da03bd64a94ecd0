import LifelineProtocol
import TestSupport
import Testing

@testable import Lifeline

@Suite("Coalesced publishing: what leaves when, and each event's own receipt", .timeLimit(.minutes(1)))
struct PublishQueueTests {
    typealias Queue = PublishQueue<Int, String>

    private final class IDs {
        var next = 0
        func make() -> String {
            next += 1
            return "t.\(next)"
        }
    }

    private func member(_ name: EventName, _ n: Int, waiter: Int? = nil, bytes: Int = 0) -> Queue.Entry {
        let payload =
            bytes > 0 ? Array(repeating: UInt8(ascii: " "), count: bytes) : Array("{\"n\":\(n)}".utf8)
        return .publication(
            .init(event: PublishedEvent(name, payload: payload), waiter: waiter, deadline: 100))
    }

    @Test(
        "a lone event leaves at once as a plain PUBLISH; what comes while it is out leaves together, in order"
    )
    func loneThenBatch() {
        let ids = IDs()
        var queue = Queue()
        let first = queue.add(member("a.x", 0, waiter: 0), now: 0, makeID: ids.make)
        let request = try! #require(first.batch?.request)
        #expect(request.count == 1 && request.event == "a.x" && request.publishID == "t.1")
        #expect(request.frames(id: [1]).count == 5, "a single event's PUBLISH, as the general path sends it")
        for n in 1...5 {
            #expect(queue.add(member("a.x", n, waiter: n), now: 0, makeID: ids.make).batch == nil)
        }
        #expect(queue.queued == 5 && queue.busy)
        let second = try! #require(queue.batchDone(now: 0, makeID: ids.make).batch)
        #expect(second.request.count == 5 && second.request.publishID == "t.2")
        #expect(second.members.map(\.waiter) == [1, 2, 3, 4, 5])
        #expect(
            second.request.events.map { String(decoding: $0.payload, as: UTF8.self) }
                == (1...5).map { "{\"n\":\($0)}" })
        #expect(queue.batchDone(now: 0, makeID: ids.make).batch == nil)
        #expect(queue.isIdle)
    }

    @Test("a batch stops at its event count or its byte bound; an event above the bound still goes, alone")
    func bounds() {
        let ids = IDs()
        var queue = Queue(maximumEvents: 3, maximumBytes: 100)
        _ = queue.add(member("a.x", 0), now: 0, makeID: ids.make)
        for n in 1...4 { _ = queue.add(member("a.x", n), now: 0, makeID: ids.make) }
        _ = queue.add(member("a.big", 5, bytes: 500), now: 0, makeID: ids.make)
        _ = queue.add(member("a.x", 6, bytes: 60), now: 0, makeID: ids.make)
        _ = queue.add(member("a.x", 7, bytes: 60), now: 0, makeID: ids.make)
        var sizes: [Int] = []
        while let batch = queue.batchDone(now: 0, makeID: ids.make).batch {
            sizes.append(batch.request.count)
        }
        #expect(sizes == [3, 1, 1, 1, 1])
        #expect(queue.isIdle && queue.queued == 0)
    }

    @Test("a barrier passes at once when nothing is out, else once everything before it is answered")
    func barriers() {
        let ids = IDs()
        var queue = Queue()
        #expect(queue.add(.barrier("idle"), now: 0, makeID: ids.make).passed == ["idle"])
        _ = queue.add(member("a.x", 0), now: 0, makeID: ids.make)
        #expect(queue.add(.barrier("behind the first"), now: 0, makeID: ids.make).passed.isEmpty)
        _ = queue.add(member("a.x", 1), now: 0, makeID: ids.make)
        _ = queue.add(.barrier("behind the second"), now: 0, makeID: ids.make)
        let afterFirst = queue.batchDone(now: 0, makeID: ids.make)
        #expect(afterFirst.passed == ["behind the first"])
        #expect(afterFirst.batch?.request.count == 1, "a barrier cuts the batch: nothing after it joins")
        let afterSecond = queue.batchDone(now: 0, makeID: ids.make)
        #expect(afterSecond.passed == ["behind the second"] && afterSecond.batch == nil)
        #expect(queue.isIdle)
    }

    @Test(
        "an event that may not share a PUBLISH goes alone, unacknowledged; one past its deadline is failed, not sent"
    )
    func aloneAndExpired() {
        let ids = IDs()
        var queue = Queue()
        _ = queue.add(member("a.x", 0), now: 0, makeID: ids.make)
        _ = queue.add(member("a.x", 1), now: 0, makeID: ids.make)
        _ = queue.add(
            .publication(
                .init(event: PublishedEvent(.willTerminate, payload: []), waiter: 9, deadline: 5, alone: true)
            ),
            now: 0, makeID: ids.make)
        _ = queue.add(member("a.x", 2), now: 0, makeID: ids.make)
        _ = queue.add(
            .publication(.init(event: PublishedEvent("a.late", payload: []), waiter: 7, deadline: 3)), now: 0,
            makeID: ids.make)
        _ = queue.add(member("a.x", 3), now: 0, makeID: ids.make)
        let first = queue.batchDone(now: 0, makeID: ids.make).batch
        #expect(
            first?.request.count == 1 && first?.request.event == "a.x",
            "the batch stops before the lone event")
        let alone = queue.batchDone(now: 0, makeID: ids.make).batch
        #expect(alone?.request.event == .willTerminate && alone?.request.acknowledged == false)
        #expect(alone?.request.count == 1)
        let later = queue.batchDone(now: 4, makeID: ids.make)
        #expect(later.expired.map(\.waiter) == [7], "a.late's deadline (3) passed while it waited")
        #expect(later.batch?.request.count == 2 && later.batch?.members.map(\.event.name) == ["a.x", "a.x"])
    }

    @Test("each member's receipt: its own name, sequence and subscribers, the batch's epoch and lifecycle")
    func receipts() {
        let members: [Queue.Member] = ["a.x", "b.y", "a.x"].map {
            .init(event: PublishedEvent($0, payload: []), waiter: nil, deadline: 0)
        }
        var batch = PublishReceipt(
            event: "a.x", sequence: 12, epoch: 7, subscribers: 3, lifecycle: .active)
        batch.count = 3
        batch.subscribersByEvent = ["a.x": 1, "b.y": 2]
        let receipts = Queue.receipts(for: members, from: batch)
        #expect(receipts.map(\.event) == ["a.x", "b.y", "a.x"])
        #expect(receipts.map(\.sequence) == [10, 11, 12])
        #expect(receipts.map(\.subscribers) == [1, 2, 1])
        #expect(receipts.allSatisfy { $0.epoch == 7 && $0.lifecycle == .active && $0.count == 1 })
        let single = PublishReceipt(event: "a.x", sequence: 4, epoch: 7, subscribers: 0, lifecycle: nil)
        #expect(Queue.receipts(for: [members[0]], from: single) == [single])
    }

    @Test("events that move the lifecycle or are acknowledged by rule never share a PUBLISH")
    func whatCoalesces() {
        #expect(Queue.coalesces("com.example.tick"))
        #expect(Queue.coalesces(.openURL))
        #expect(!Queue.coalesces(.didBecomeActive))
        #expect(!Queue.coalesces(.willTerminate))
        #expect(!Queue.coalesces(.didReceiveMemoryWarning))
    }

    @Test("the receipt of a batch of several names carries each name's subscribers, and reads back")
    func subscribersByEventOnTheWire() throws {
        var receipt = PublishReceipt(event: "b.y", sequence: 9, epoch: 2, subscribers: 3, lifecycle: .active)
        receipt.count = 2
        receipt.subscribersByEvent = ["a.x": 1, "b.y": 2]
        let text = String(decoding: receipt.body, as: UTF8.self)
        #expect(text.hasSuffix(#""subscribers":3,"subscribersByEvent":{"a.x":1,"b.y":2}}"#))
        #expect(try PublishReceipt(json: JSONParser.parse(text)) == receipt)
    }

    /// The queue as first written, entries copied one by one: the reference the queue's moves are
    /// checked against.
    private struct ReferenceQueue {
        let maximumEvents: Int
        let maximumBytes: Int
        var entries: [Queue.Entry] = []
        var busy = false

        mutating func add(_ entry: Queue.Entry, now: UInt64) -> (
            batch: [Queue.Member]?, passed: [String], expired: [Int]
        ) {
            if case .barrier(let barrier) = entry, !busy, entries.isEmpty { return (nil, [barrier], []) }
            entries.append(entry)
            return busy ? (nil, [], []) : next(now: now)
        }

        mutating func batchDone(now: UInt64) -> (batch: [Queue.Member]?, passed: [String], expired: [Int]) {
            busy = false
            return next(now: now)
        }

        mutating func withdraw(waiter: Int) -> Bool {
            guard
                let index = entries.firstIndex(where: {
                    if case .publication(let member) = $0 { member.waiter == waiter } else { false }
                })
            else { return false }
            entries.remove(at: index)
            return true
        }

        var queued: Int {
            entries.filter { if case .publication = $0 { true } else { false } }.count
        }

        private mutating func next(now: UInt64) -> (batch: [Queue.Member]?, passed: [String], expired: [Int])
        {
            var members: [Queue.Member] = []
            var passed: [String] = []
            var expired: [Int] = []
            var bytes = 0
            taking: while let entry = entries.first {
                switch entry {
                case .barrier(let barrier):
                    guard members.isEmpty else { break taking }
                    passed.append(barrier)
                case .publication(let member):
                    if member.deadline <= now {
                        expired.append(member.waiter ?? -1)
                    } else {
                        if members.count >= maximumEvents || (member.alone && !members.isEmpty) {
                            break taking
                        }
                        bytes += member.event.payload.count
                        if !members.isEmpty && bytes > maximumBytes { break taking }
                        members.append(member)
                    }
                }
                entries.removeFirst()
                if members.first?.alone == true { break }
            }
            guard !members.isEmpty else { return (nil, passed, expired) }
            busy = true
            return (members, passed, expired)
        }
    }

    @Test(
        "differential, seeded: 20 000 random adds, barriers, withdrawals and answers give the reference queue's batches"
    )
    func differential() {
        var random = SeededGenerator()
        for round in 0..<40 {
            let events = Int.random(in: 1...8, using: &random)
            let bytes = Int.random(in: 8...300, using: &random)
            var queue = Queue(maximumEvents: events, maximumBytes: bytes)
            var reference = ReferenceQueue(maximumEvents: events, maximumBytes: bytes)
            var now: UInt64 = 0
            let ids = IDs()
            for step in 0..<500 {
                now += UInt64.random(in: 0...3, using: &random)
                let got: Queue.Step
                let expected: (batch: [Queue.Member]?, passed: [String], expired: [Int])
                switch Int.random(in: 0..<10, using: &random) {
                case 0..<6:
                    let size = Int.random(in: 0...120, using: &random)
                    let alone = Int.random(in: 0..<12, using: &random) == 0
                    let member = Queue.Member(
                        event: PublishedEvent(
                            alone ? "a.alone" : "a.x", payload: Array(repeating: 32, count: size)),
                        waiter: step, deadline: now + UInt64.random(in: 0...20, using: &random), alone: alone)
                    got = queue.add(.publication(member), now: now, makeID: ids.make)
                    expected = reference.add(.publication(member), now: now)
                case 6:
                    got = queue.add(.barrier("b\(step)"), now: now, makeID: ids.make)
                    expected = reference.add(.barrier("b\(step)"), now: now)
                case 7:
                    let waiter = Int.random(in: 0...step, using: &random)
                    let withdrawn = queue.withdraw { $0.waiter == waiter }
                    let context: Comment = "round \(round), step \(step); \(random.replay)"
                    #expect(withdrawn == reference.withdraw(waiter: waiter), context)
                    #expect(queue.queued == reference.queued, context)
                    continue
                default:
                    guard queue.busy else { continue }
                    got = queue.batchDone(now: now, makeID: ids.make)
                    expected = reference.batchDone(now: now)
                }
                let context: Comment = "round \(round), step \(step); \(random.replay)"
                #expect(got.passed == expected.passed, context)
                #expect(got.expired.map { $0.waiter ?? -1 } == expected.expired, context)
                #expect(got.batch?.members.map(\.waiter) == expected.batch?.map(\.waiter), context)
                if let batch = got.batch, let members = expected.batch {
                    #expect(batch.request.events == members.map(\.event), context)
                    #expect(
                        batch.request.frame == PackedPayloads.frame(members.map(\.event.payload))
                            || members.count == 1, context)
                }
                #expect(queue.busy == reference.busy && queue.queued == reference.queued, context)
            }
        }
    }
}
