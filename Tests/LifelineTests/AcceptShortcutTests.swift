import LifelineProtocol
import TestSupport
import Testing

@testable import Lifeline

@Suite("A connection's common case against its general path", .timeLimit(.minutes(1)))
struct AcceptShortcutTests {
    @Test(
        "property, seeded: live events in order, repeated, skipped, renumbered and of another epoch give the same deliveries, requests and cursor with the common case as without it"
    )
    func againstTheGeneralPath() throws {
        var generator = SeededGenerator()
        let names: [EventName] = ["app.a", "app.b", EventName(rawValue: "app.\u{212A}"), "app.K"]
        for round in 0..<40 {
            var (fast, general) = (ConnectionHarness(), ConnectionHarness())
            general.session.takesShortcut = false
            var positions: [EventName: (sequence: UInt64, topicSequence: UInt64)] = [:]
            var sequence: UInt64 = 0
            let registers = (fast.join(), general.join())
            #expect(registers.0 == registers.1)
            fast.reply(to: registers.0, ["epoch": 77, "sequence": 0, "topics": [:]])
            general.reply(to: registers.1, ["epoch": 77, "sequence": 0, "topics": [:]])
            for step in 0..<400 {
                let name = names.randomElement(using: &generator)!
                var position = positions[name] ?? (0, 0)
                var epoch: UInt64? = nil
                switch Int.random(in: 0..<20, using: &generator) {
                case 0:
                    // A repeat of an event already delivered.
                    break
                case 1:
                    // A skipped topic sequence (a gap the journal is asked for).
                    sequence += 2
                    position = (sequence, position.topicSequence + 2)
                case 2:
                    // The broker numbers the name afresh.
                    sequence += 1
                    position = (sequence, 1)
                case 3:
                    sequence += 1
                    epoch = 78
                default:
                    sequence += 1
                    position = (sequence, position.topicSequence + 1)
                }
                if epoch == nil { positions[name] = position }
                let context =
                    "round \(round), step \(step), \(name) #\(position.sequence); \(generator.replay)"
                fast.bus(
                    name, sequence: position.sequence, topicSequence: position.topicSequence, epoch: epoch)
                general.bus(
                    name, sequence: position.sequence, topicSequence: position.topicSequence, epoch: epoch)
                #expect(fast.effects == general.effects, "\(context)")
                // A REPLAY the journal cannot fill: both go on from the broker's state.
                let replays = (
                    fast.sent.filter { $0.command == .replay }, general.sent.filter { $0.command == .replay }
                )
                #expect(replays.0 == replays.1, "\(context)")
                for (request, other) in zip(replays.0, replays.1) {
                    let answer: JSONValue = ["replayed": 0, "sequence": .int(Int64(sequence)), "epoch": 77]
                    fast.reply(to: request, answer)
                    general.reply(to: other, answer)
                    #expect(fast.effects == general.effects, "\(context), after the REPLAY")
                }
                #expect(fast.session.cursor == general.session.cursor, "\(context)")
                // A name looked at by the common case has a cursor at the start: no cursor, to every reader.
                let same = names.allSatisfy { name in
                    (fast.session.topics[name] ?? .init()) == (general.session.topics[name] ?? .init())
                }
                #expect(same, "\(context)")
                if fast.effects != general.effects || fast.session.cursor != general.session.cursor || !same {
                    return
                }
            }
        }
    }
}
