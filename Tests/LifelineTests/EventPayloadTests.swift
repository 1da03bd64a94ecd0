import LifelineProtocol
import TestSupport
import Testing

@testable import Lifeline

@Suite("An event's payload read field by field", .timeLimit(.minutes(1)))
struct EventPayloadTests {
    @Test(
        "property, seeded: several fields read from one payload (up to twelve members), in any order, before and after the whole object, are the members of the parse"
    )
    func severalReads() throws {
        var generator = SeededGenerator()
        let keys = ["k", "q", "K", "\u{212A}", "\u{E9}", "p", "kA"]
        let values = [
            #"1"#, #"-7"#, #""text""#, #"[1,{"k":2}]"#, #"{"k":"inner"}"#, #"null"#, #"true"#, #"2.5"#,
            #""0123456789abcdef\"0123456789abcdef""#,
        ]
        for round in 0..<2_000 {
            var members: [String] = []
            for _ in 0..<Int.random(in: 0...12, using: &generator) {
                let key = keys.randomElement(using: &generator)!
                let written = key == "kA" && Bool.random(using: &generator) ? "k\\u0041" : key
                members.append("\"\(written)\":\(values.randomElement(using: &generator)!)")
            }
            let text = "{" + members.joined(separator: ",") + "}"
            let whole = try JSONParser.parse(Array(text.utf8))
            let payload = EventPayload(bytes: Array(text.utf8))
            let names = (keys + ["missing"]).shuffled(using: &generator)
            let wholeAfter = Int.random(in: 0...names.count, using: &generator)
            for (index, name) in names.enumerated() {
                if index == wholeAfter { #expect(payload.value == whole) }
                #expect(
                    payload[name] == whole[name], "round \(round): \(name) in \(text); \(generator.replay)")
                if payload[name] != whole[name] { return }
            }
        }
    }
}
