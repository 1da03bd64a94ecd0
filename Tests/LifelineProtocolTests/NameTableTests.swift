import LifelineProtocol
import TestSupport
import Testing

@testable import LifelineProtocol

@Suite("NameTable: a value per name, the last one found again without hashing", .timeLimit(.minutes(1)))
struct NameTableTests {
    @Test(
        "property, seeded: updates in runs and out of them, names alike only as Unicode, copies held and merges, against a dictionary"
    )
    func againstADictionary() {
        var generator = SeededGenerator()
        let names = ["a.K", "a.\u{212A}", "b", "caf\u{E9}", "cafe\u{301}"] + (0..<40).map { "n.\($0)" }
        for round in 0..<20 {
            var table = NameTable<Int>()
            var model: [EventName: Int] = [:]
            var held: [(copy: [EventName: Int], then: [EventName: Int])] = []
            var name = EventName(rawValue: names[0])
            for step in 0..<2_000 {
                if Int.random(in: 0..<4, using: &generator) == 0 {
                    name = EventName(rawValue: names.randomElement(using: &generator)!)
                }
                switch Int.random(in: 0..<50, using: &generator) {
                case 0: held.append((table.values, model))
                case 1:
                    let other: [EventName: Int] = [name: step, EventName(rawValue: "m.\(step)"): -step]
                    table.merge(other, keep: max)
                    model.merge(other, uniquingKeysWith: max)
                default:
                    let delta = Int.random(in: 1...3, using: &generator)
                    let value = table.update(name, initial: 100) { $0 += delta }
                    model[name, default: 100] += delta
                    #expect(value == model[name], "round \(round), step \(step); \(generator.replay)")
                }
                #expect(
                    table[name] == model[name] && table.values.count == model.count, "\(generator.replay)")
            }
            #expect(table.values == model, "round \(round); \(generator.replay)")
            #expect(held.allSatisfy { $0.copy == $0.then }, "copies taken along the way keep what they had")
        }
    }
}
