import TestSupport
import Testing

@testable import LifelineProtocol

@Suite("JSON codec", .timeLimit(.minutes(1)))
struct JSONTests {
    @Test(
        "values round-trip through text",
        arguments: [
            "null", "true", "false", "0", "-12", "9223372036854775807", "1.5", "-2.5e-07", "\"\"",
            "\"a\\\"b\\\\c\\n\"",
            "[]", "{}", "[1,[2,[3]]]", "{\"a\":{\"b\":[null,true]},\"z\":\"é😀\"}",
        ])
    func roundTrip(text: String) throws {
        let value = try JSONParser.parse(text)
        let again = try JSONParser.parse(JSONWriter.encode(value))
        #expect(value == again)
    }

    @Test("objects encode with sorted keys")
    func sortedKeys() {
        let value: JSONValue = ["b": 1, "a": ["x", nil, true], "c": 2.5]
        #expect(value.description == #"{"a":["x",null,true],"b":1,"c":2.5}"#)
    }

    @Test("escapes: control characters, unicode escapes and surrogate pairs")
    func escapes() throws {
        #expect(JSONValue.string("a\u{1}b\tc").description == #""a\u0001b\tc""#)
        #expect(try JSONParser.parse(#""\u00e9\ud83d\ude00\/""#) == .string("é😀/"))
        #expect(throws: JSONParseError.self) { try JSONParser.parse(#""\ud83d""#) }
        #expect(throws: JSONParseError.self) { try JSONParser.parse(#""\ude00x""#) }
    }

    @Test("the writer: integers at their limits, plain and escaped strings, object keys in order")
    func writer() throws {
        for number: Int64 in [0, 7, -7, 10, 1_796_022_761_636_622_627, .max, .min] {
            var bytes: [UInt8] = []
            JSONWriter.writeInteger(number, into: &bytes)
            #expect(String(decoding: bytes, as: UTF8.self) == String(number))
        }
        for text in ["", "bench.n1", "é😀", "say \"hi\"\\", "tab\tnl\n\u{1F}"] {
            var bytes: [UInt8] = []
            JSONWriter.writeString(text, into: &bytes)
            #expect(try JSONParser.parse(bytes) == .string(text))
        }
        var object = JSONObjectWriter()
        object.add("epoch", Int64(-3))
        object.add("event", "a\"b")
        #expect(String(decoding: object.finish(), as: UTF8.self) == #"{"epoch":-3,"event":"a\"b"}"#)
    }

    @Test("integers stay exact; big numbers fall back to double")
    func numbers() throws {
        #expect(try JSONParser.parse("1234567890123456789") == .int(1_234_567_890_123_456_789))
        #expect(try JSONParser.parse("12345678901234567890123").doubleValue == 1.2345678901234568e22)
        #expect(try JSONParser.parse("1e3") == .double(1000))
        #expect(JSONValue.double(.infinity).description == "null")
        // A number a double cannot hold is refused where it starts, not read as infinity (and
        // written again as null); one too small to tell from zero is zero.
        for text in ["1E400", "[1, -1e400]", "1" + String(repeating: "0", count: 400)] {
            #expect(throws: JSONParseError.self, "\(text.prefix(20))") { try JSONParser.parse(text) }
            #expect((try? JSONTape(Array(text.utf8))) == nil, "the tape refuses it too")
        }
        #expect(throws: JSONParseError(offset: 4, reason: "-1e400 is beyond a double's range (±1.8e308)")) {
            try JSONParser.parse("[1, -1e400]")
        }
        #expect(try JSONParser.parse("1e-400") == .double(0))
    }

    @Test(
        "bad input names the byte and the problem",
        arguments: [
            ("", 0, "unexpected end of input"), ("{", 1, "expected a string key"),
            ("[1,]", 3, "unexpected ']'"),
            ("{\"a\" 1}", 5, "expected ':'"), ("tru", 0, "expected 'true'"),
            ("01", 1, "unexpected '1' after the document"),
            ("\"abc", 4, "unterminated string"), ("\"a\u{1}\"", 2, "control character in string"),
            ("-", 1, "expected a digit"),
            ("1.", 2, "expected a digit after '.'"), ("{} x", 3, "unexpected 'x' after the document"),
        ])
    func errors(text: String, offset: Int, reason: String) {
        #expect(throws: JSONParseError(offset: offset, reason: reason)) { try JSONParser.parse(text) }
    }

    @Test("invalid UTF-8 inside strings is refused")
    func invalidUTF8() {
        #expect(throws: JSONParseError.self) { try JSONParser.parse([0x22, 0xFF, 0xFE, 0x22]) }
    }

    @Test("nesting deeper than the limit is refused without exhausting the stack")
    func depthLimit() throws {
        let ok = String(repeating: "[", count: 64) + String(repeating: "]", count: 64)
        #expect(throws: Never.self) { try JSONParser.parse(ok) }
        let hostile = String(repeating: "[", count: 100_000)
        #expect(throws: JSONParseError.self) { try JSONParser.parse(hostile) }
    }

    static func integralDoublesAsIntegers(_ value: JSONValue) -> JSONValue {
        switch value {
        case .double(let number) where number.rounded() == number && abs(number) < 1e15: .int(Int64(number))
        case .array(let elements): .array(elements.map(integralDoublesAsIntegers))
        case .object(let members): .object(members.mapValues(integralDoublesAsIntegers))
        default: value
        }
    }

    /// Where two values first differ, as a path (for a failure message).
    static func difference(_ left: JSONValue?, _ right: JSONValue?, path: String = "$") -> String {
        switch (left, right) {
        case (.object(let a)?, .object(let b)?):
            if a.count != b.count { return "\(path): \(a.keys.sorted()) vs \(b.keys.sorted())" }
            for (key, value) in a {
                if b[key] != value {
                    return difference(value, b[key], path: "\(path).\(Array(key.unicodeScalars))")
                }
            }
        case (.array(let a)?, .array(let b)?):
            if a.count != b.count { return "\(path): \(a.count) vs \(b.count) elements" }
            for index in a.indices where a[index] != b[index] {
                return difference(a[index], b[index], path: "\(path)[\(index)]")
            }
        default: break
        }
        return "\(path): \(String(describing: left)) vs \(String(describing: right))"
    }

    /// A random JSON value, `depth` levels deep at most.
    static func randomValue(_ generator: inout SeededGenerator, depth: Int = 3) -> JSONValue {
        let characters = Array("aé\"\\/\u{0}\u{1f}\n\t 😀{}[],:0")
        func text() -> String {
            String(
                (0..<Int.random(in: 0...8, using: &generator)).map { _ in
                    characters.randomElement(using: &generator)!
                })
        }
        switch Int.random(in: 0...(depth > 0 ? 6 : 4), using: &generator) {
        case 0: return .null
        case 1: return .bool(Bool.random(using: &generator))
        case 2: return .int(Int64.random(in: .min ... .max, using: &generator))
        case 3: return .double(Double(Int32.random(in: .min ... .max, using: &generator)) / 64 + 0.5)
        case 4: return .string(text())
        case 5:
            return .array(
                (0..<Int.random(in: 0...4, using: &generator)).map { _ in
                    randomValue(&generator, depth: depth - 1)
                })
        default:
            var members: [String: JSONValue] = [:]
            for _ in 0..<Int.random(in: 0...4, using: &generator) {
                members[text()] = randomValue(&generator, depth: depth - 1)
            }
            return .object(members)
        }
    }

    @Test(
        "property, seeded: parse ∘ encode is the identity on values; bytes either parse to a value that survives encode and parse, or are refused saying where and why"
    )
    func roundTripProperty() {
        var generator = SeededGenerator()
        for round in 0..<2000 {
            // JSON has one kind of number: the writer writes an integral double as an integer.
            let value = Self.integralDoublesAsIntegers(Self.randomValue(&generator))
            let encoded = JSONWriter.encode(value)
            let parsed = try? JSONParser.parse(encoded)
            #expect(
                parsed == value,
                "round \(round): \(String(decoding: encoded, as: UTF8.self)) differs at \(Self.difference(parsed, value)); \(generator.replay)"
            )
            if parsed != value { return }
        }
        let alphabet = Array("{}[]\":,.-+eE0123456789truefalsnl \\u\u{7f}".utf8)
        for round in 0..<5000 {
            let length = Int.random(in: 0..<40, using: &generator)
            let bytes = (0..<length).map { _ in
                Bool.random(using: &generator)
                    ? alphabet.randomElement(using: &generator)!
                    : UInt8.random(in: 0...255, using: &generator)
            }
            do {
                let value = try JSONParser.parse(bytes)
                // "9E1" parses to a double and is written back as the integer 90: the same JSON number.
                let expected = Self.integralDoublesAsIntegers(value)
                let again = try? JSONParser.parse(JSONWriter.encode(value))
                #expect(again == expected, "round \(round): \(bytes); \(generator.replay)")
                if again != expected { return }
            } catch {
                // Refused with where and why: the offset lies within the input.
                let located = error.offset >= 0 && error.offset <= bytes.count && !error.reason.isEmpty
                #expect(located, "round \(round): \(bytes) → \(error); \(generator.replay)")
                if !located { return }
            }
        }
    }
}

@Suite("Reading one field of a JSON object")
struct JSONFieldReaderTests {
    static let documents = [
        #"{"k":12,"q":1,"p":"xxxx"}"#,
        #" { "a" : [1, {"k": "inner"}, "]"] , "k" : {"x": [true, null]}, "z": -1.5e3 } "#,
        #"{"s":"with \"quotes\" and \\ back","k":"v\u00e9"}"#,
        #"{"nested":{"k":1},"other":"}{"}"#,
        #"{}"#,
        #"{"k\u0041":1,"k":2}"#,
        #"{"k":1,"q":2,"k":3}"#,
        "{\"K\":1,\"\u{212A}\":2}",
        "{\"k\":\"caf\u{E9}\",\"e\u{301}\":1}",
    ]

    @Test("every member reads as the whole parse has it; an absent one is nil", arguments: documents)
    func matchesWholeParse(_ text: String) throws {
        let bytes = Array(text.utf8)
        let whole = try JSONParser.parse(bytes)
        for key in ["k", "q", "p", "a", "z", "s", "nested", "other", "missing", "x"] {
            switch JSONFieldReader.value(of: key, in: bytes) {
            case .none: #expect(whole[key] == nil, "\(key) in \(text)")
            case .some(let value?): #expect(value == whole[key], "\(key) in \(text)")
            case .some(nil):
                #expect(
                    text.contains("\\u0041") || text.utf8.contains { $0 >= 0x80 },
                    "only an escaped or a non-ASCII key makes it give up: \(text)")
            }
        }
    }

    @Test(
        "property, seeded: a member read in place is the member of the whole parse — repeated keys, keys equal only as Unicode, escaped keys"
    )
    func fieldReaderMatchesTheParser() throws {
        var generator = SeededGenerator()
        let keys = ["k", "q", "K", "\u{212A}", "\u{E9}", "e\u{301}", "p", "kA"]
        let values = [
            #"1"#, #"-7"#, #""text""#, #"[1,{"k":2}]"#, #"{"k":"inner"}"#, #"null"#, #"true"#, #"2.5"#,
            // Long strings, skipped eight bytes at a time, with escapes at several offsets.
            #""aaaaaaa\"bbbbbbbbb\\ccccccccc\u0041dddddddd""#, #""0123456789abcdef0123456789abcdef""#,
            #""\u00e90123456\"7\\\\89abcdefg\"""#, #"["0123456789abcdef\"", "k"]"#,
        ]
        var answeredInPlace = 0
        for round in 0..<2_000 {
            var members: [String] = []
            for _ in 0..<Int.random(in: 0...6, using: &generator) {
                let key = keys.randomElement(using: &generator)!
                // Now and then the key written with an escape, which the reader leaves to the parser.
                let written = key == "kA" && Bool.random(using: &generator) ? "k\\u0041" : key
                members.append("\"\(written)\":\(values.randomElement(using: &generator)!)")
            }
            let text = "{" + members.joined(separator: ",") + "}"
            let bytes = Array(text.utf8)
            let whole = try JSONParser.parse(bytes)
            for name in keys + ["missing"] {
                switch JSONFieldReader.value(of: name, in: bytes) {
                case .none:
                    #expect(whole[name] == nil, "round \(round), seed \(generator.seed): \(name) in \(text)")
                    answeredInPlace += 1
                case .some(let value?):
                    #expect(
                        value == whole[name], "round \(round), seed \(generator.seed): \(name) in \(text)")
                    answeredInPlace += 1
                case .some(nil): break
                }
            }
        }
        #expect(answeredInPlace > 2_000, "the reader answered most lookups itself")
    }

    @Test(
        "a scalar read in place is what the parser reads, and what it cannot read in place goes to the parser",
        arguments: [
            "0", "-0", "7", "-42", "123456789012345678", "1234567890123456789", "99999999999999999999", "01",
            "1.5",
            "-1e3", "true", "false", "null", "nul", "\"\"", "\"plain é\"", "\"a\\nb\"", "\"unterminated", "-",
        ])
    func scalarsAsParsed(_ text: String) {
        let bytes = Array(text.utf8)
        let inPlace = bytes.withUnsafeBufferPointer { JSONFieldReader.scalar($0) }
        if let inPlace {
            #expect(inPlace == (try? JSONParser.parse(bytes)), "\(text)")
        }
        let member = JSONFieldReader.value(of: "k", in: Array("{\"k\":\(text)}".utf8))
        switch member {
        case .some(let value?): #expect(value == (try? JSONParser.parse(bytes)), "\(text) as a member")
        case .some(nil): #expect((try? JSONParser.parse(bytes)) == nil, "\(text): gave up only on bad JSON")
        case .none: Issue.record("the member is there: \(text)")
        }
    }

    @Test("text that is not an object makes it give up rather than guess")
    func notAnObject() {
        for text in ["[1]", "", "{\"k\"", "{\"k\":}", "{\"k\" 1}"] {
            let result = JSONFieldReader.value(of: "k", in: Array(text.utf8))
            #expect(result.map { $0 == nil } ?? true, "\(text)")
        }
    }
}

@Suite("Byte comparisons of the decoders")
struct ByteComparisonTests {
    @Test("arrays and literals compare as their bytes do")
    func comparisons() {
        #expect(ProtocolID.busLiteral.description == ProtocolID.bus)
        #expect(ByteComparison.equal(Array("LLB01".utf8), ProtocolID.busLiteral))
        #expect(!ByteComparison.equal(Array("LLB02".utf8), ProtocolID.busLiteral))
        #expect(!ByteComparison.equal(Array("LLB0".utf8), ProtocolID.busLiteral))
        #expect(ByteComparison.equal([1, 2, 3], [1, 2, 3]) && !ByteComparison.equal([1, 2, 3], [1, 2]))
        #expect(!ByteComparison.equal([1, 2, 3], [1, 2, 4]) && ByteComparison.equal([], []))
        let kelvin = EventName(rawValue: "a.\u{212A}")
        #expect(kelvin == "a.K" && !kelvin.isIdentical(to: "a.K") && kelvin.isIdentical(to: kelvin))
    }
}

@Suite("Bytes written at their exact length")
struct ByteCursorTests {
    @Test("decimals are written as the JSON writer writes them, in as many bytes as counted")
    func decimals() {
        for number: Int64 in [0, 7, 9, 10, 99, 100, -1, -10, 1_796_147_865_981_131_357, .max, .min] {
            var expected: [UInt8] = []
            JSONWriter.writeInteger(number, into: &expected)
            #expect(ByteCursor.digits(of: number) == expected.count, "\(number)")
            let written = ByteCursor.bytes(count: expected.count + 2) { cursor in
                cursor.put(UInt8(ascii: "["))
                cursor.put(decimal: number)
                cursor.put("]")
            }
            #expect(written == [UInt8(ascii: "[")] + expected + [UInt8(ascii: "]")], "\(number)")
        }
    }
}

@Suite("The validator judges scalars as the parser does")
struct JSONValidatorScalarTests {
    @Test("nesting is limited as the parser limits it: 64 containers, a scalar inside them is fine")
    func depthAsTheParser() {
        for depth in [63, 64, 65] {
            let document = Array(
                (String(repeating: "[", count: depth) + "1" + String(repeating: "]", count: depth)).utf8)
            let parsed = try? JSONParser.parse(document)
            let validated = try? JSONValidator.topLevelType(of: document)
            #expect((parsed != nil) == (validated != nil), "\(depth)")
            #expect((validated != nil) == (depth <= 64), "\(depth)")
        }
    }

    @Test("strings read eight bytes at a time: a special byte at any offset is judged as the parser does")
    func specialBytesAtEveryOffset() {
        let specials: [[UInt8]] = [
            [0x22], [0x5C, 0x22], [0x5C, 0x6E], [0x5C], [0x0A], [0x1F], [0x7F], [0xC3, 0xA9], [0xC3], [0xFF],
            [0x5C, 0x75, 0x30, 0x30, 0x34, 0x31], [0x00], [0x20], [0x21], [0x23], [0x5B], [0x5D], [0x80],
        ]
        for special in specials {
            for offset in 0..<20 {
                for tail in [0, 1, 9] {
                    let text =
                        [UInt8](repeating: UInt8(ascii: "x"), count: offset) + special
                        + [UInt8](repeating: UInt8(ascii: "y"), count: tail)
                    let document = Array("{\"p\":\"".utf8) + text + Array("\"}".utf8)
                    let parsed = try? JSONParser.parse(document)
                    let validated = try? JSONValidator.topLevelType(of: document)
                    #expect((parsed != nil) == (validated != nil), "\(special) at \(offset), tail \(tail)")
                }
            }
        }
    }

    @Test(
        "accepted exactly when the parser accepts, with the same type",
        arguments: [
            "0", "-0", "01", "1.", ".5", "-", "1.5", "-12.25", "12345678901234567890", "1e5", "1E-2", "true",
            "false", "null", "truex", "nul", "--1", "1.2.3", "0x10", "123456789012345", "t", "fals", "falsey",
            "nulll", "n", "True", "NULL",
        ])
    func sameVerdict(_ scalar: String) {
        let document = Array("{\"v\":\(scalar)}".utf8)
        let parsed = try? JSONParser.parse(document)
        let validated = try? JSONValidator.topLevelType(of: document)
        #expect((parsed != nil) == (validated != nil), "\(scalar)")
        let bare = try? JSONValidator.topLevelType(of: Array(scalar.utf8))
        #expect(bare == (try? JSONParser.parse(Array(scalar.utf8)))?.typeName, "\(scalar)")
    }
}
