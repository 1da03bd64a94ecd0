import LifelineProtocol
import Testing

@testable import LifelineBroker

@Suite(
    "One correlator: request ids, deadlines, and replies only from the peer asked", .timeLimit(.minutes(1)))
struct CorrelatorTests {
    static func at(_ milliseconds: UInt64) -> MonotonicInstant {
        MonotonicInstant(nanoseconds: milliseconds * 1_000_000)
    }

    @Test("the deadline heap gives due keys earliest first and skips withdrawn or rescheduled ones")
    func heap() {
        var heap = DeadlineHeap<Int>()
        for (key, deadline) in [(1, 50), (2, 10), (3, 30), (4, 20), (5, 40)] {
            heap.schedule(key, at: Self.at(UInt64(deadline)))
        }
        heap.cancel(4)
        heap.schedule(5, at: Self.at(5))
        let earliest = heap.peek()
        #expect(earliest == Self.at(5))
        let first = heap.popDue(now: Self.at(30))
        #expect(first == [5, 2, 3])
        let none = heap.popDue(now: Self.at(49))
        #expect(none == [])
        let last = heap.popDue(now: Self.at(60))
        #expect(last == [1])
        let after = heap.peek()
        #expect(heap.isEmpty && after == nil)
    }

    @Test("withdrawn deadlines do not pile up: the heap stays within twice its live keys")
    func heapStaysSmall() {
        var heap = DeadlineHeap<Int>()
        for key in 0..<10_000 {
            heap.schedule(key, at: Self.at(UInt64(key)))
            if key >= 10 { heap.cancel(key - 10) }
        }
        #expect(heap.storedCount <= 2 * 10 + 64)
        let due = heap.popDue(now: Self.at(20_000))
        #expect(due == Array(9_990..<10_000))
    }

    @Test("ids are 16 hex digits and distinct; a reply from another peer is foreign and leaves the wait open")
    func peers() throws {
        var correlator = Correlator()
        let alice = correlator.open(.services, key: 1, peer: Array("alice".utf8), deadline: Self.at(100))
        let timer = correlator.open(.publish, key: 2, peer: nil, deadline: Self.at(50))
        #expect(alice.count == 16 && alice.allSatisfy { Array("0123456789abcdef".utf8).contains($0) })
        #expect(alice != timer)
        let forged = correlator.take(alice, from: Array("mallory".utf8))
        #expect(forged == nil)
        #expect(correlator.isForeign(alice, from: Array("mallory".utf8)))
        let timerReply = correlator.take(timer, from: Array("alice".utf8))
        #expect(timerReply == nil, "nobody answers a timer")
        let answered = correlator.take(alice, from: Array("alice".utf8))
        let taken = try #require(answered)
        #expect(taken.owner == .services && taken.key == 1)
        let again = correlator.take(alice, from: Array("alice".utf8))
        #expect(again == nil, "a wait is answered once")
        let other = correlator.open(.services, key: 3, peer: Array("alice".utf8), deadline: nil)
        let upper = Array(String(decoding: other, as: UTF8.self).uppercased().utf8)
        for id in [
            Array(other.dropLast()), other + [UInt8(ascii: "0")], upper,
            Array(repeating: UInt8(ascii: "g"), count: 16),
        ]
        where id != other {
            #expect(correlator.take(id, from: Array("alice".utf8)) == nil, "never issued: \(id)")
            #expect(!correlator.isForeign(id, from: Array("bob".utf8)))
        }
        let exact = correlator.take(other, from: Array("alice".utf8))
        #expect(exact?.key == 3)
        let expired = correlator.removeExpired(now: Self.at(200))
        #expect(expired.map(\.key) == [2])
        #expect(correlator.count == 0)
    }

    @Test("waits closed early never expire; the rest expire once, by deadline")
    func expiry() {
        var correlator = Correlator()
        let first = correlator.open(.dispatch, key: 1, peer: [1], deadline: Self.at(30))
        correlator.open(.dispatch, key: 2, peer: [1], deadline: Self.at(10))
        correlator.open(.boot, key: 3, peer: nil, deadline: nil)
        correlator.close(first)
        correlator.close(owner: .boot, key: 3)
        let next = correlator.nextDeadline()
        #expect(next == Self.at(10))
        let due = correlator.removeExpired(now: Self.at(100))
        #expect(due.map(\.key) == [2])
        let later = correlator.removeExpired(now: Self.at(200))
        #expect(later.isEmpty)
        #expect(correlator.count == 0)
    }

    @Test("a forged REPLY from another peer never reaches the caller; the service's own answer does")
    func forgedReply() throws {
        var broker = BrokerHarness()
        broker.register("push", peer: "svc")
        broker.request("cli", .call, ["service": "push", "method": "status"])
        let forwarded = try #require(broker.requests(to: "svc").first)
        broker.raw("mallory", ControlReply(requestID: forwarded.requestID, json: ["forged": true]).frames())
        #expect(broker.replies(to: "cli").isEmpty)
        let id = String(decoding: forwarded.requestID, as: UTF8.self)
        #expect(
            broker.output.contains(
                .log(
                    "refused a reply to request '\(id)': that request was sent to another peer (this one came from peer 6d616c6c6f7279)"
                )))
        let refusal = try #require(broker.replies(to: "mallory").first)
        #expect(refusal.status == .forbidden && refusal.requestID == forwarded.requestID)
        #expect(
            refusal.errorMessage
                == "refused a reply to request '\(id)': that request was sent to another peer")
        broker.raw("svc", ControlReply(requestID: forwarded.requestID, json: ["real": true]).frames())
        let reply = try #require(broker.replies(to: "cli").first)
        #expect(try reply.json() == ["real": true])
    }

    @Test("a service that reconnects mid-call answers from its new connection, and the caller gets it")
    func replyAfterReconnect() throws {
        var broker = BrokerHarness()
        broker.register("push", peer: "old", instance: "i1")
        broker.request("cli", .call, ["service": "push", "method": "status"])
        let forwarded = try #require(broker.requests(to: "old").first)
        broker.register("push", peer: "new", instance: "i1")
        broker.raw("new", ControlReply(requestID: forwarded.requestID, json: ["after": "reconnect"]).frames())
        let reply = try #require(broker.replies(to: "cli").first)
        #expect(try reply.json() == ["after": "reconnect"])
    }

    @Test("markers forgotten or seen again do not pile up in the marker table's order")
    func markerOrderStaysSmall() {
        var markers = AttachTracker()
        for index in 0..<10_000 {
            _ = markers.markerSubscribed("t\(index)", now: 0)
            markers.markerUnsubscribed("t\(index)")
        }
        #expect(markers.orderCount <= 64)
    }
}
