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

    @Test("integers stay exact; big numbers fall back to double")
    func numbers() throws {
        #expect(try JSONParser.parse("1234567890123456789") == .int(1_234_567_890_123_456_789))
        #expect(try JSONParser.parse("12345678901234567890123").doubleValue == 1.2345678901234568e22)
        #expect(try JSONParser.parse("1e3") == .double(1000))
        #expect(JSONValue.double(.infinity).description == "null")
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

    @Test("random bytes never crash the parser")
    func fuzz() {
        var generator = SystemRandomNumberGenerator()
        let alphabet = Array("{}[]\":,.-+eE0123456789truefalsnl \\u\u{7f}".utf8)
        for _ in 0..<5000 {
            let length = Int.random(in: 0..<40, using: &generator)
            let bytes = (0..<length).map { _ in
                Bool.random(using: &generator)
                    ? alphabet.randomElement(using: &generator)!
                    : UInt8.random(in: 0...255, using: &generator)
            }
            _ = try? JSONParser.parse(bytes)
        }
    }
}
