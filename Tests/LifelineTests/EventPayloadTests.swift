import LifelineProtocol
import TestSupport
import Testing

@testable import Lifeline

@Suite("An event's payload read field by field", .timeLimit(.minutes(1)))
struct EventPayloadTests {
    @Test(
        "property, seeded: fields read from a payload — each from fresh text, and several from one payload in any order, before and after the whole object — are the members of the parse"
    )
    func severalReads() throws {
        var generator = SeededGenerator()
        let plain = ["k", "q", "p", "kA", "x", "y", "z"]
        // Names the reader leaves to the parser: equal only as Unicode, or not ASCII.
        let special = ["K", "\u{212A}", "\u{E9}"]
        let values = [
            #"1"#, #"-7"#, #""text""#, #"[1,{"k":2}]"#, #"{"k":"inner"}"#, #"null"#, #"true"#, #"2.5"#,
            #""0123456789abcdef\"0123456789abcdef""#,
        ]
        var (reads, answeredInPlace) = (0, 0)
        for round in 0..<2_000 {
            var members: [String] = []
            for _ in 0..<Int.random(in: 0...12, using: &generator) {
                let rare = Int.random(in: 0..<12, using: &generator) == 0
                let key =
                    rare ? special.randomElement(using: &generator)! : plain.randomElement(using: &generator)!
                let written = key == "kA" && Int.random(in: 0..<8, using: &generator) == 0 ? "k\\u0041" : key
                members.append("\"\(written)\":\(values.randomElement(using: &generator)!)")
            }
            let text = Array(("{" + members.joined(separator: ",") + "}").utf8)
            let whole = try JSONParser.parse(text)
            let names = (plain + special + ["missing"]).shuffled(using: &generator)
            let context = "round \(round): \(String(decoding: text, as: UTF8.self)); \(generator.replay)"
            for name in names {
                reads += 1
                if case .some(nil) = JSONFieldReader.value(of: name, in: text) {
                } else {
                    answeredInPlace += 1
                }
                #expect(EventPayload(bytes: text)[name] == whole[name], "\(name) in \(context)")
            }
            let payload = EventPayload(bytes: text)
            let wholeAfter = Int.random(in: 0...names.count, using: &generator)
            for (index, name) in names.enumerated() {
                if index == wholeAfter { #expect(payload.value == whole) }
                #expect(payload[name] == whole[name], "\(name), read after others, in \(context)")
                if payload[name] != whole[name] { return }
            }
        }
        #expect(answeredInPlace * 2 > reads, "the reader answered most reads from the text itself")
    }
}
