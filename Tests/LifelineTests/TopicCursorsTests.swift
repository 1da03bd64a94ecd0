import LifelineProtocol
import TestSupport
import Testing

@testable import Lifeline

@Suite("TopicCursors: each name's position", .timeLimit(.minutes(1)))
struct TopicCursorsTests {
    typealias Cursor = TopicCursors.Cursor

    @Test("a name advances only to its next event; a name without a cursor is left to the general path")
    func advance() {
        var cursors = TopicCursors()
        #expect(cursors["a.b"] == nil)
        let moved0 = cursors.advance("a.b", sequence: 5, topicSequence: 1)
        #expect(!moved0)
        #expect(cursors["a.b"] == nil, "no cursor made")
        cursors["a.b"] = Cursor(sequence: 5, topicSequence: 1)
        let moved2 = cursors.advance("a.b", sequence: 6, topicSequence: 3)
        #expect(!moved2, "a skipped topic sequence")
        let moved3 = cursors.advance("a.b", sequence: 5, topicSequence: 2)
        #expect(!moved3, "a sequence not past the cursor")
        #expect(cursors["a.b"] == Cursor(sequence: 5, topicSequence: 1), "unchanged by refusals")
        let moved4 = cursors.advance("c.d", sequence: 7, topicSequence: 1)
        #expect(!moved4)
        #expect(cursors["c.d"] == nil)
        let moved5 = cursors.advance("a.b", sequence: 8, topicSequence: 2)
        #expect(moved5)
        #expect(cursors["a.b"] == Cursor(sequence: 8, topicSequence: 2))
    }

    @Test("names set, read and forgotten in any order keep their own positions")
    func interleaved() {
        var cursors = TopicCursors()
        var expected: [String: Cursor] = [:]
        var sequence: UInt64 = 0
        for step in 0..<200 {
            let name = "n.\(step * 7 % 5)"
            sequence += 1
            let before = expected[name] ?? Cursor()
            let next = Cursor(sequence: sequence, topicSequence: before.topicSequence + 1)
            if step % 3 == 0 || expected[name] == nil {
                cursors[EventName(rawValue: name)] = next
            } else {
                let moved = cursors.advance(
                    EventName(rawValue: name), sequence: sequence, topicSequence: next.topicSequence)
                #expect(moved)
            }
            expected[name] = next
            #expect(cursors[EventName(rawValue: name)] == next, "the remembered name, read back at once")
            for (other, cursor) in expected { #expect(cursors[EventName(rawValue: other)] == cursor) }
            if step == 100 {
                cursors.removeAll()
                expected.removeAll()
                for index in 0..<5 { #expect(cursors[EventName(rawValue: "n.\(index)")] == nil) }
            }
        }
    }

    @Test(
        "property, seeded: set, advance (moved or refused) and forget in any order, names spelled alike or not, against a dictionary"
    )
    func againstADictionary() {
        var generator = SeededGenerator()
        let names = ["a.K", "a.\u{212A}", "b", "caf\u{E9}", "cafe\u{301}", "c.x"].map {
            EventName(rawValue: $0)
        }
        for round in 0..<50 {
            var cursors = TopicCursors()
            var model: [EventName: Cursor] = [:]
            for step in 0..<300 {
                let name = names.randomElement(using: &generator)!
                let current = model[name] ?? Cursor()
                let sequence = current.sequence &+ UInt64.random(in: 0...2, using: &generator)
                let topicSequence = current.topicSequence &+ UInt64.random(in: 0...2, using: &generator)
                let context = "round \(round), step \(step), \(name); \(generator.replay)"
                switch Int.random(in: 0..<20, using: &generator) {
                case 0: (cursors, model) = (TopicCursors(), [:])
                case 1..<6:
                    cursors[name] = Cursor(sequence: sequence, topicSequence: topicSequence)
                    model[name] = Cursor(sequence: sequence, topicSequence: topicSequence)
                default:
                    let moves =
                        model[name] != nil && sequence > current.sequence
                        && topicSequence == current.topicSequence &+ 1
                    let moved = cursors.advance(name, sequence: sequence, topicSequence: topicSequence)
                    #expect(moved == moves, "\(context)")
                    if moves { model[name] = Cursor(sequence: sequence, topicSequence: topicSequence) }
                }
                for other in names {
                    #expect(cursors[other] == model[other], "\(other) after \(context)")
                }
            }
        }
    }

    @Test("canonically equal names (the Kelvin sign) share one entry, as the table's String keys do")
    func bytesNotText() {
        var cursors = TopicCursors()
        cursors["app.K"] = Cursor(sequence: 1, topicSequence: 1)
        let kelvin = EventName(rawValue: "app.\u{212A}")
        #expect(cursors[kelvin] == Cursor(sequence: 1, topicSequence: 1), "the table compares as String does")
        let moved7 = cursors.advance(kelvin, sequence: 2, topicSequence: 2)
        #expect(moved7)
        #expect(cursors["app.K"] == Cursor(sequence: 2, topicSequence: 2))
    }
}
