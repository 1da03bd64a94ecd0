import Foundation
import TestSupport
import Testing

@testable import LifelineProtocol

/// The straight-to-bytes coders against the tree's, which are the reference: the same text means
/// the same value, the same value decodes, the same failures say the same thing.
@Suite("Typed values to and from bytes without a tree, against the tree's coders", .timeLimit(.minutes(1)))
struct BytesCodingTests {
    enum Tier: String, Codable, Equatable { case gold, silver }
    enum Shape: Codable, Equatable {
        case circle(radius: Double)
        case box(Int, Int)
        case none
    }

    struct Line: Codable, Equatable {
        var sku: String
        var count: Int
        var note: String?
    }

    struct Order: Codable, Equatable {
        var id: UUID
        var tier: Tier
        var lines: [Line]
        var tags: Set<String>
        var shape: Shape
        var extra: JSONValue
        var byName: [String: Int]
        var byNumber: [Int: String]
        var matrix: [[Double]]
        var placed: Date
        var link: URL?
        var small: UInt8
        var flag: Bool?
        var nothing: [String]
    }

    struct Empty: Codable, Equatable {}

    /// Encodes through two containers at once, going back to the first: out of order for a writer.
    struct Interleaved: Encodable {
        enum Keys: String, CodingKey { case a, b, c }
        func encode(to encoder: any Encoder) throws {
            var outer = encoder.container(keyedBy: Keys.self)
            var first = outer.nestedContainer(keyedBy: Keys.self, forKey: .a)
            var second = outer.nestedUnkeyedContainer(forKey: .b)
            try second.encode(1)
            try first.encode("late", forKey: .c)
            try outer.encode(true, forKey: .c)
        }
    }

    /// Uses a super encoder, and encodes nothing for one member.
    struct WithSuper: Encodable {
        enum Keys: String, CodingKey { case base, silent }
        struct Silent: Encodable { func encode(to encoder: any Encoder) throws {} }
        func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: Keys.self)
            try container.encode(Silent(), forKey: .silent)
            var base = container.superEncoder(forKey: .base).singleValueContainer()
            try base.encode(7)
        }
    }

    static func order(_ number: Int) -> Order {
        Order(
            id: UUID(uuidString: "6F9619FF-8B86-D011-B42D-00C04FC964FF")!,
            tier: number % 2 == 0 ? .gold : .silver,
            lines: (0..<number).map {
                Line(sku: "sku-\($0) \"é\"\n", count: $0 * 3 - 4, note: $0 % 2 == 0 ? nil : "n")
            },
            tags: ["a", "b\\"],
            shape: number % 3 == 0 ? .circle(radius: 2.5) : number % 3 == 1 ? .box(1, -2) : .none,
            extra: ["k": [1, "x", .null, ["deep": true]]], byName: ["x": 1, "y": -2], byNumber: [3: "three"],
            matrix: [[1.5, -0.25], [], [1e300]], placed: Date(timeIntervalSince1970: 1_700_000_000.25),
            link: URL(string: "app://topup?x=1"), small: 255, flag: number % 2 == 0 ? nil : false, nothing: []
        )
    }

    /// The tree's text of `value` (its keys sorted), parsed.
    static func tree<T: Encodable>(_ value: T) throws -> JSONValue { try JSONValueEncoder.encode(value) }

    @Test("the text the writer makes parses to the tree the tree's encoder makes, for all kinds of members")
    func encodesAsTheTree() throws {
        for number in 0..<6 {
            let order = Self.order(number)
            #expect(try JSONParser.parse(try JSONBytesEncoder.encode(order)) == Self.tree(order))
        }
        #expect(try JSONBytesEncoder.encode(Empty()) == Array("{}".utf8))
        #expect(try JSONBytesEncoder.encode(Optional<Int>.none) == Array("null".utf8))
        #expect(try JSONBytesEncoder.encode([1, 2]) == Array("[1,2]".utf8))
        #expect(try JSONBytesEncoder.encode("x") == Array(#""x""#.utf8))
        let line = try JSONBytesEncoder.encode(Line(sku: "a", count: 1, note: nil))
        #expect(line == Array(#"{"sku":"a","count":1}"#.utf8), "members in the type's order, nil left out")
    }

    @Test(
        "a type that goes back to a container it left, or asks for a super encoder, is written through the tree"
    )
    func outOfOrderFallsBack() throws {
        #expect(try JSONParser.parse(try JSONBytesEncoder.encode(Interleaved())) == Self.tree(Interleaved()))
        #expect(try JSONParser.parse(try JSONBytesEncoder.encode(WithSuper())) == Self.tree(WithSuper()))
        #expect(try Self.tree(WithSuper()) == ["silent": [:], "base": 7])
    }

    @Test("numbers JSON cannot hold are refused with the tree's message and path")
    func refusals() {
        struct Wide: Encodable { let lines: [[String: UInt64]] }
        let wide = Wide(lines: [["count": 1], ["count": UInt64.max]])
        let message = { (body: () throws -> Any) -> String in
            do {
                _ = try body()
                return "encoded"
            } catch { return "\(error)" }
        }
        #expect(
            message { try JSONBytesEncoder.encode(wide) } == message { try JSONValueEncoder.encode(wide) })
        #expect(
            message { try JSONBytesEncoder.encode(wide) }.contains(
                "field 'lines[1].count' is 18446744073709551615"))
        #expect(
            message { try JSONBytesEncoder.encode([Double.nan]) }
                == message { try JSONValueEncoder.encode([Double.nan]) })
    }

    @Test("decoding from bytes gives the value decoding the tree gives, whatever the member order")
    func decodesAsTheTree() throws {
        for number in 0..<6 {
            let order = Self.order(number)
            let sorted = JSONWriter.encode(try Self.tree(order))
            #expect(try JSONBytesDecoder.decode(Order.self, from: sorted) == order)
            #expect(
                try JSONBytesDecoder.decode(Order.self, from: try JSONBytesEncoder.encode(order)) == order)
            #expect(try JSONBytesDecoder.decode(JSONValue.self, from: sorted) == Self.tree(order))
        }
        #expect(
            try JSONBytesDecoder.decode(Line.self, from: Array(#"{"count":1,"sku":"a","count":2}"#.utf8))
                .count == 2)
        #expect(try JSONBytesDecoder.decode(Line?.self, from: []) == nil, "no bytes are null")
        #expect(try JSONBytesDecoder.decode(Empty.self, from: Array(#" {"x": [1, {}]} "#.utf8)) == Empty())
    }

    @Test(
        "a document that does not fit fails with the tree decoder's words",
        arguments: [
            #"{"sku": 5, "count": 1}"#, #"{"sku": "a"}"#, #"{"sku": "a", "count": 1.5}"#,
            #"{"sku": "a", "count": 99999999999999999999}"#, #"{"sku": "a", "count": "1"}"#, #"[1]"#,
            #"{"sku":"#,
            #"{"sku": "\u00e9 long text that goes on and on beyond forty characters", "count": null}"#,
            #"{"sku": "a", "count": 1, "note": ["x"]}"#,
        ])
    func failures(_ text: String) {
        let bytes = Array(text.utf8)
        let fromTree: String
        do {
            _ = try JSONValueDecoder.decode(Line.self, from: bytes)
            fromTree = "decoded"
        } catch { fromTree = error.description }
        let fromBytes: String
        do {
            _ = try JSONBytesDecoder.decode(Line.self, from: bytes)
            fromBytes = "decoded"
        } catch { fromBytes = error.description }
        #expect(fromBytes == fromTree)
        #expect(fromBytes != "decoded")
    }

    @Test(
        "member names are matched as the tree's String keys are: a Kelvin sign is K, a decomposed é is é, the last of equal names counts",
        arguments: [
            "{\"K\":1}", "{\"\u{212A}\":1}", "{\"K\":1,\"\u{212A}\":2}", "{\"\u{212A}\":2,\"K\":1}",
            "{\"K\":1,\"caf\u{E9}\":3}", "{\"K\":1,\"cafe\u{301}\":3}",
            "{\"K\":1,\"caf\u{E9}\":3,\"cafe\u{301}\":4}",
            "{\"k\":1}",
        ])
    func unicodeNames(_ text: String) {
        struct Named: Decodable, Equatable {
            let kelvin: Int
            let cafe: Int?
            enum CodingKeys: String, CodingKey {
                case kelvin = "K"
                case cafe = "caf\u{E9}"
            }
        }
        let bytes = Array(text.utf8)
        func outcome(_ decode: () throws -> Named) -> String {
            do { return "\(try decode())" } catch { return "\(error)" }
        }
        let fromTree = outcome { try JSONValueDecoder.decode(Named.self, from: bytes) }
        #expect(outcome { try JSONBytesDecoder.decode(Named.self, from: bytes) } == fromTree, "\(text)")
    }

    @Test("a dictionary with several bad entries is refused naming the same one in both decoders, every time")
    func severalBadEntries() {
        let bytes = Array(#"{"zeta": "a", "K": 1, "alpha": "b", "\u212a": "c", "-2": "d"}"#.utf8)
        func refusal(_ decode: () throws -> [String: Int]) -> String {
            do { return "decoded \(try decode())" } catch { return "\(error)" }
        }
        let fromTree = refusal { try JSONValueDecoder.decode([String: Int].self, from: bytes) }
        #expect(fromTree.contains("at [-2]:"), "\(fromTree)")
        for _ in 0..<5 {
            #expect(refusal { try JSONBytesDecoder.decode([String: Int].self, from: bytes) } == fromTree)
            #expect(refusal { try JSONValueDecoder.decode([String: Int].self, from: bytes) } == fromTree)
        }
    }

    @Test("the path of a failure deep inside names members by their names and elements by their positions")
    func deepPaths() {
        struct Cell: Decodable {
            let price: Int
            enum CodingKeys: Int, CodingKey { case price }
        }
        struct Sheet: Decodable { let rows: [String: [Cell]] }
        let bytes = Array(#"{"rows": {"7": [{"price": 1}, {"price": "x"}], "a": []}}"#.utf8)
        var messages: [String] = []
        for decode in [
            { _ = try JSONBytesDecoder.decode(Sheet.self, from: bytes) },
            { _ = try JSONValueDecoder.decode(Sheet.self, from: bytes) },
        ] as [() throws -> Void] {
            do {
                try decode()
                messages.append("decoded")
            } catch { messages.append("\(error)") }
        }
        #expect(messages[0] == messages[1])
        #expect(messages[0].hasPrefix("cannot decode Sheet at rows[7][1].price: expected an integer"))
    }

    @Test(
        "property, seeded: the tape reads what the parser reads — the same values, the same refusals — for random values and random bytes"
    )
    func tapeMatchesTheParser() {
        var generator = SeededGenerator()
        for round in 0..<2000 {
            let encoded = JSONWriter.encode(JSONTests.randomValue(&generator))
            let parsed = try? JSONParser.parse(encoded)
            let taped = try? JSONTape(encoded).value(at: 0)
            #expect(
                taped == parsed,
                "round \(round): \(String(decoding: encoded, as: UTF8.self)); \(generator.replay)")
            if taped != parsed { return }
        }
        let alphabet = Array("{}[]\":,.-+eE0123456789truefalsnl \\u\u{7f}".utf8)
        for round in 0..<20000 {
            let length = Int.random(in: 0..<24, using: &generator)
            let bytes = (0..<length).map { _ in
                Bool.random(using: &generator)
                    ? alphabet.randomElement(using: &generator)!
                    : UInt8.random(in: 0...255, using: &generator)
            }
            let parsed = try? JSONParser.parse(bytes)
            let taped = try? JSONTape(bytes).value(at: 0)
            #expect(taped == parsed, "round \(round): \(bytes); \(generator.replay)")
            if taped != parsed { return }
        }
        let deep =
            Array(String(repeating: "[", count: 65).utf8) + Array(String(repeating: "]", count: 65).utf8)
        #expect((try? JSONTape(deep)) == nil && (try? JSONParser.parse(deep)) == nil)
    }

    /// A value of every kind the byte coders take apart differently from the tree's.
    struct Sample: Codable, Equatable {
        var text: String
        var count: Int
        var big: UInt64?
        var ratio: Double
        var flag: Bool
        var lines: [Line]
        var byName: [String: Int]
        var nested: [[Int8]]?
    }

    static func randomSample(_ generator: inout SeededGenerator) -> Sample {
        let characters = Array("aé\"\\/\u{0}\u{1f}\n\t 😀{}[],:0")
        func text() -> String {
            String(
                (0..<Int.random(in: 0..<8, using: &generator)).map { _ in
                    characters.randomElement(using: &generator)!
                })
        }
        func integer() -> Int {
            [Int.min, Int.max, 0, -1, Int.random(in: -1_000_000...1_000_000, using: &generator)]
                .randomElement(using: &generator)!
        }
        let lines = (0..<Int.random(in: 0..<3, using: &generator)).map { _ in
            Line(sku: text(), count: integer(), note: Bool.random(using: &generator) ? text() : nil)
        }
        var byName: [String: Int] = [:]
        for _ in 0..<Int.random(in: 0..<3, using: &generator) { byName[text()] = integer() }
        return Sample(
            text: text(), count: integer(),
            big: Bool.random(using: &generator)
                ? UInt64.random(in: 0...UInt64(Int64.max), using: &generator) : nil,
            ratio: [0.5, -1e300, 3.25, Double(integer())].randomElement(using: &generator)!,
            flag: Bool.random(using: &generator), lines: lines, byName: byName,
            nested: Bool.random(using: &generator)
                ? [[Int8.min, Int8.max], [Int8.random(in: -9...9, using: &generator)]] : nil)
    }

    /// What decoding gives: the value, or the error's words.
    enum Outcome<T: Equatable>: Equatable {
        case value(T)
        case refused(String)

        init(_ decode: () throws -> T) {
            do { self = .value(try decode()) } catch { self = .refused("\(error)") }
        }
    }

    @Test(
        "property, seeded: the byte coders against the tree's on random values and on their texts mutated — text of the same value, the same values, the same refusals in the same words"
    )
    func byteCodersMatchTheTree() throws {
        var generator = SeededGenerator()
        let alphabet = Array("{}[]\":,.-+eE0123456789truefalsnl \\u".utf8)
        for round in 0..<500 {
            let sample = Self.randomSample(&generator)
            let text = try JSONBytesEncoder.encode(sample)
            #expect(
                JSONWriter.encode(try JSONParser.parse(text))
                    == JSONWriter.encode(try JSONValueEncoder.encode(sample)),
                "round \(round): the text is not the tree's value; \(generator.replay)")
            #expect(
                try JSONBytesDecoder.decode(Sample.self, from: text) == sample,
                "round \(round); \(generator.replay)")
            for _ in 0..<8 {
                var mutated = text
                let index = Int.random(in: 0..<mutated.count, using: &generator)
                mutated[index] = alphabet.randomElement(using: &generator)!
                let fromBytes = Outcome { try JSONBytesDecoder.decode(Sample.self, from: mutated) }
                let fromTree = Outcome { try JSONValueDecoder.decode(Sample.self, from: mutated) }
                #expect(
                    fromBytes == fromTree,
                    "round \(round): \(String(decoding: mutated, as: UTF8.self)); \(generator.replay)")
                if fromBytes != fromTree { return }
            }
        }
    }

    @Test(
        "property, seeded: arguments read member by member (JSONDocument, a distributed func's) decode as the parsed members do, or fail in the same words"
    )
    func documentMatchesTheTree() throws {
        var generator = SeededGenerator()
        let names = ["a", "b", "K", "\u{212A}", "caf\u{E9}", "cafe\u{301}", "x\"y", ""]
        let alphabet = Array("{}[]\":,0123456789truefalsnl \\u".utf8)
        for round in 0..<300 {
            let values = try (0..<Int.random(in: 0...4, using: &generator)).map { _ in
                try JSONBytesEncoder.encode(Self.randomSample(&generator))
            }
            var text: [UInt8]
            if Bool.random(using: &generator) {
                text = Array("[".utf8) + Array(values.joined(separator: Array(",".utf8))) + Array("]".utf8)
            } else {
                let members = values.map { value in
                    JSONWriter.encode(.string(names.randomElement(using: &generator)!)) + Array(":".utf8)
                        + value
                }
                text = Array("{".utf8) + Array(members.joined(separator: Array(",".utf8))) + Array("}".utf8)
            }
            if Bool.random(using: &generator), !text.isEmpty {
                text[Int.random(in: 0..<text.count, using: &generator)] = alphabet.randomElement(
                    using: &generator)!
            }
            let context = "round \(round): \(String(decoding: text, as: UTF8.self)); \(generator.replay)"
            guard let tree = try? JSONParser.parse(text) else {
                #expect((try? JSONDocument(text: text)) == nil, "\(context)")
                continue
            }
            let document = try JSONDocument(text: text)
            switch (document.root, tree) {
            case (.object(let members), .object(let parsed)):
                #expect(Set(members.names) == Set(parsed.keys), "\(context)")
                #expect(members.allNamed(in: Array(parsed.keys)), "\(context)")
                #expect(
                    parsed.isEmpty || !members.allNamed(in: Array(parsed.keys.dropFirst())),
                    "\(context): a name left out")
                for name in Set(members.names) {
                    let node = try #require(members[name], "\(name) in \(context)")
                    let fromTree = Outcome {
                        try JSONValueDecoder.decode(Sample.self, from: parsed[name] ?? .null)
                    }
                    #expect(
                        Outcome { try document.decode(Sample.self, at: node) } == fromTree,
                        "\(name) in \(context)")
                    #expect(document.string(at: node) == parsed[name]?.stringValue, "\(context)")
                }
            case (.array(let elements), .array(let parsed)):
                #expect(elements.count == parsed.count, "\(context)")
                for (node, element) in zip(elements, parsed) {
                    let fromTree = Outcome { try JSONValueDecoder.decode(Sample.self, from: element) }
                    #expect(Outcome { try document.decode(Sample.self, at: node) } == fromTree, "\(context)")
                }
            case (.null, .null): break
            case (.other, .object), (.other, .array), (.other, .null):
                Issue.record("a container read as a scalar: \(context)")
            case (.other, _): break
            default: Issue.record("the document's top level is not the parsed one's: \(context)")
            }
        }
    }

    /// Foundation's own Codable types, a set, and a subclass written through `superEncoder` and read
    /// through `superDecoder` (keyed and unkeyed): what neither coder special-cases.
    class Base: Codable {
        var id: Int
        init(id: Int) { self.id = id }
    }

    final class Derived: Base, Equatable, @unchecked Sendable {
        var name: String
        var parts: [Int]

        enum CodingKeys: String, CodingKey { case name, parts, base }

        init(id: Int, name: String, parts: [Int]) {
            self.name = name
            self.parts = parts
            super.init(id: id)
        }

        required init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            name = try container.decode(String.self, forKey: .name)
            var unkeyed = try container.nestedUnkeyedContainer(forKey: .parts)
            var parts: [Int] = []
            let first = try Base(from: unkeyed.superDecoder())
            while !unkeyed.isAtEnd { parts.append(try unkeyed.decode(Int.self)) }
            self.parts = [first.id] + parts
            try super.init(from: container.superDecoder(forKey: .base))
        }

        override func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(name, forKey: .name)
            var unkeyed = container.nestedUnkeyedContainer(forKey: .parts)
            try Base(id: parts.first ?? 0).encode(to: unkeyed.superEncoder())
            for part in parts.dropFirst() { try unkeyed.encode(part) }
            try super.encode(to: container.superEncoder(forKey: .base))
        }

        static func == (a: Derived, b: Derived) -> Bool {
            a.id == b.id && a.name == b.name && a.parts == b.parts
        }
    }

    struct Stamped: Codable, Equatable {
        var when: Date
        var id: UUID
        var link: URL
        var tags: Set<String>
        var bytes: Data?
        var derived: Derived?
    }

    @Test(
        "property, seeded: Date, UUID, URL, Set, Data and a subclass through superEncoder/superDecoder — the byte coders write the tree's text and read what it reads, refusing in the same words"
    )
    func foundationTypesMatchTheTree() throws {
        var generator = SeededGenerator()
        let links = ["https://example.com/a?b=c", "app://home", "relative/path", "mailto:x@y.z"]
        let words = ["a", "b\"", "caf\u{E9}", "", "\u{212A}"]
        let alphabet = Array("{}[]\":,.-+eE0123456789truefalsnl \\uABCDEF".utf8)
        for round in 0..<400 {
            let value = Stamped(
                when: Date(
                    timeIntervalSinceReferenceDate: Double(
                        Int.random(in: -1_000_000...1_000_000, using: &generator)) / 8),
                id: UUID(
                    uuidString: [8, 4, 4, 4, 12].map { count in
                        String((0..<count).map { _ in "0123456789ABCDEF".randomElement(using: &generator)! })
                    }.joined(separator: "-"))!,
                link: URL(string: links.randomElement(using: &generator)!)!,
                tags: Set(words.shuffled(using: &generator).prefix(Int.random(in: 0...3, using: &generator))),
                bytes: Bool.random(using: &generator)
                    ? Data(
                        (0..<Int.random(in: 0...4, using: &generator)).map { _ in
                            UInt8.random(in: 0...255, using: &generator)
                        })
                    : nil,
                derived: Bool.random(using: &generator)
                    ? Derived(
                        id: Int.random(in: -9...9, using: &generator),
                        name: words.randomElement(using: &generator)!,
                        parts: (0..<Int.random(in: 1...3, using: &generator)).map { $0 })
                    : nil)
            let text = try JSONBytesEncoder.encode(value)
            let context = "round \(round): \(String(decoding: text, as: UTF8.self)); \(generator.replay)"
            #expect(
                JSONWriter.encode(try JSONParser.parse(text))
                    == JSONWriter.encode(try JSONValueEncoder.encode(value)),
                "\(context): not the tree's text")
            #expect(try JSONBytesDecoder.decode(Stamped.self, from: text) == value, "\(context)")
            #expect(try JSONValueDecoder.decode(Stamped.self, from: text) == value, "\(context)")
            for _ in 0..<6 {
                var mutated = text
                mutated[Int.random(in: 0..<mutated.count, using: &generator)] = alphabet.randomElement(
                    using: &generator)!
                let fromBytes = Outcome { try JSONBytesDecoder.decode(Stamped.self, from: mutated) }
                let fromTree = Outcome { try JSONValueDecoder.decode(Stamped.self, from: mutated) }
                #expect(
                    fromBytes == fromTree,
                    "round \(round): \(String(decoding: mutated, as: UTF8.self)); \(generator.replay)")
                if fromBytes != fromTree { return }
            }
        }
    }
}
