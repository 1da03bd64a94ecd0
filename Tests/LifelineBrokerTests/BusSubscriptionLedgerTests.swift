import Testing

@testable import LifelineBroker

@Suite("What a bus connection may hold, and when it is cut off", .timeLimit(.minutes(1)))
struct BusSubscriptionLedgerTests {
    static func topic(_ text: String) -> ArraySlice<UInt8> { Array(text.utf8)[...] }

    @Test("a connection holds at most its limit; a repeat and an unsubscribe make room as they should")
    func limit() {
        var ledger = BusSubscriptionLedger(limit: 2, cutOffAfter: 3)
        #expect(ledger.take(1, subscribe: true, topic: Self.topic("a\0"), problem: nil) == .apply)
        #expect(ledger.take(1, subscribe: true, topic: Self.topic("a\0"), problem: nil) == .apply, "a repeat")
        #expect(ledger.take(1, subscribe: true, topic: Self.topic("b\0"), problem: nil) == .apply)
        #expect(
            ledger.take(1, subscribe: true, topic: Self.topic("c\0"), problem: nil)
                == .refuse("a bus connection holds at most 2 subscriptions", first: true))
        #expect(
            ledger.take(2, subscribe: true, topic: Self.topic("c\0"), problem: nil) == .apply,
            "per connection")
        #expect(ledger.take(1, subscribe: false, topic: Self.topic("a\0"), problem: nil) == .apply)
        #expect(
            ledger.take(1, subscribe: true, topic: Self.topic("c\0"), problem: nil) == .apply, "room again")
        #expect(ledger.count(of: 1) == 2)
    }

    @Test("refusals are counted per connection: the first is said, the last cuts it off, then it is ignored")
    func cutOff() {
        var ledger = BusSubscriptionLedger(limit: 10, cutOffAfter: 3)
        #expect(
            ledger.take(1, subscribe: true, topic: Self.topic("x"), problem: "too long")
                == .refuse("too long", first: true))
        #expect(
            ledger.take(1, subscribe: true, topic: Self.topic("x"), problem: "too long")
                == .refuse("too long", first: false))
        #expect(ledger.refusals(of: 1) == ["too long", "too long"], "for the ATTACH reply")
        #expect(ledger.refusals(of: 2).isEmpty)
        #expect(
            ledger.take(1, subscribe: true, topic: Self.topic("x"), problem: "too long")
                == .cutOff("it sent 3 subscriptions the bus refuses (the last: too long)"))
        #expect(ledger.take(1, subscribe: true, topic: Self.topic("a\0"), problem: nil) == .ignore)
        let worthTrimming = ledger.forget(1)
        #expect(worthTrimming, "a cut connection's memory is worth giving back")
        #expect(ledger.refusals(of: 1).isEmpty)
        #expect(
            ledger.take(1, subscribe: true, topic: Self.topic("a\0"), problem: nil) == .apply,
            "a new connection")
    }

    @Test("a malformed notice (no Lifeline client sends one) cuts its connection off at once; others go on")
    func malformed() {
        var ledger = BusSubscriptionLedger(limit: 10, cutOffAfter: 32)
        #expect(
            ledger.take(1, subscribe: true, topic: Self.topic("x"), problem: "too long", malformed: true)
                == .cutOff("it sent a subscription no client sends (too long)"))
        #expect(ledger.take(1, subscribe: true, topic: Self.topic("a\0"), problem: nil) == .ignore)
        #expect(ledger.take(2, subscribe: true, topic: Self.topic("a\0"), problem: nil) == .apply)
        #expect(
            ledger.take(0, subscribe: true, topic: Self.topic("x"), problem: "too long", malformed: true)
                == .refuse("too long", first: true), "connection 0 is not cut off")
    }

    @Test("connection 0 (inproc, not numbered by the monitor) is not limited")
    func unnumbered() {
        var ledger = BusSubscriptionLedger(limit: 1, cutOffAfter: 1)
        for name in ["a", "b", "c"] {
            #expect(ledger.take(0, subscribe: true, topic: Self.topic(name), problem: nil) == .apply)
        }
        #expect(
            ledger.take(0, subscribe: true, topic: Self.topic("x"), problem: "no")
                == .refuse("no", first: true))
    }
}
