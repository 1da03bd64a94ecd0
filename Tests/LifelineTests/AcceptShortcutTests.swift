import LifelineProtocol
import TestSupport
import Testing

@testable import Lifeline

@Suite("A connection's common case against its general path", .timeLimit(.minutes(1)))
struct AcceptShortcutTests {
    /// One event as the broker published it.
    private struct Published {
        let name: EventName
        let sequence: UInt64
        let topicSequence: UInt64
    }

    @Test(
        "property, seeded: live events in order, repeated, lost (then replayed from the journal), renumbered and of another epoch, alone or several to a bus message, give the same deliveries, requests, cursor and positions with the common case as without it"
    )
    func againstTheGeneralPath() throws {
        var generator = SeededGenerator()
        let names: [EventName] = ["app.a", "app.b", EventName(rawValue: "app.\u{212A}"), "app.K"]
        var liveDeliveries = 0
        for round in 0..<40 {
            var (fast, general) = (ConnectionHarness(), ConnectionHarness())
            general.session.takesShortcut = false
            let registers = (fast.join(), general.join())
            #expect(registers.0 == registers.1)
            fast.reply(to: registers.0, ["epoch": 77, "sequence": 0, "topics": [:]])
            general.reply(to: registers.1, ["epoch": 77, "sequence": 0, "topics": [:]])
            // What the broker's journal holds (this epoch), and each name's last position.
            var journal: [Published] = []
            var positions: [EventName: (sequence: UInt64, topicSequence: UInt64)] = [:]
            var sequence: UInt64 = 0
            func publish(_ name: EventName, topicSequence: UInt64) -> Published {
                sequence += 1
                let event = Published(name: name, sequence: sequence, topicSequence: topicSequence)
                journal.append(event)
                positions[name] = (sequence, topicSequence)
                return event
            }
            for step in 0..<400 {
                let name = names.randomElement(using: &generator)!
                // One event to a bus message, or a run of several of one name (as the broker sends a
                // batch), each of them any of the cases below.
                let size =
                    Int.random(in: 0..<4, using: &generator) == 0
                    ? Int.random(in: 2...6, using: &generator) : 1
                var run: [(sequence: UInt64, topicSequence: UInt64, epoch: UInt64?)] = []
                for _ in 0..<size {
                    let position = positions[name] ?? (0, 0)
                    var live: Published
                    var epoch: UInt64?
                    switch Int.random(in: 0..<22, using: &generator) {
                    case 0:
                        // A repeat of the name's last event (or of nothing yet).
                        live = Published(
                            name: name, sequence: position.sequence, topicSequence: position.topicSequence)
                    case 1:
                        // One event lost on the bus: the journal has it.
                        _ = publish(name, topicSequence: position.topicSequence + 1)
                        live = publish(name, topicSequence: position.topicSequence + 2)
                    case 2:
                        // The broker numbers the name afresh.
                        live = publish(name, topicSequence: 1)
                    case 3:
                        live = Published(name: name, sequence: sequence + 1, topicSequence: 1)
                        epoch = 78
                    case 4:
                        // Of another epoch, numbered as the next of its name.
                        live = Published(
                            name: name, sequence: sequence + 1, topicSequence: position.topicSequence + 1)
                        epoch = 78
                    default:
                        live = publish(name, topicSequence: position.topicSequence + 1)
                    }
                    run.append((live.sequence, live.topicSequence, epoch))
                }
                let context =
                    "round \(round), step \(step), \(name) #\(run.map(\.sequence)); \(generator.replay)"
                if run.count == 1 {
                    fast.bus(
                        name, sequence: run[0].sequence, topicSequence: run[0].topicSequence,
                        epoch: run[0].epoch)
                    general.bus(
                        name, sequence: run[0].sequence, topicSequence: run[0].topicSequence,
                        epoch: run[0].epoch)
                } else {
                    fast.bus(name, events: run)
                    general.bus(name, events: run)
                }
                #expect(fast.effects == general.effects, "\(context)")
                liveDeliveries += fast.delivered.count
                // REPLAYs answered from the journal, until none is outstanding.
                var answered = 0
                while let replay = fast.sent.first(where: { $0.command == .replay }), answered < 10 {
                    answered += 1
                    let other = try #require(
                        general.sent.first(where: { $0.command == .replay }), "\(context)")
                    #expect(replay == other, "\(context)")
                    let after = UInt64(replay.header["after"]?.intValue ?? 0)
                    let asked = Set((replay.header["events"]?.arrayValue ?? []).compactMap(\.stringValue))
                    let events = journal.filter { $0.sequence > after && asked.contains($0.name.rawValue) }
                    for event in events {
                        fast.journalEvent(
                            event.name, sequence: event.sequence, topicSequence: event.topicSequence)
                        general.journalEvent(
                            event.name, sequence: event.sequence, topicSequence: event.topicSequence)
                        #expect(fast.effects == general.effects, "\(context), replaying #\(event.sequence)")
                    }
                    let answer: JSONValue = [
                        "replayed": .int(Int64(events.count)), "sequence": .int(Int64(sequence)), "epoch": 77,
                    ]
                    fast.reply(to: replay, answer)
                    general.reply(to: other, answer)
                    #expect(fast.effects == general.effects, "\(context), after the REPLAY")
                }
                #expect(!fast.session.recovering, "\(context): recovered")
                #expect(fast.session.cursor == general.session.cursor, "\(context)")
                let same = names.allSatisfy { fast.session.topics[$0] == general.session.topics[$0] }
                #expect(same, "\(context)")
                if fast.effects != general.effects || fast.session.cursor != general.session.cursor || !same {
                    return
                }
            }
        }
        #expect(liveDeliveries > 40 * 300, "most live events reached accept and were delivered")
    }
}
