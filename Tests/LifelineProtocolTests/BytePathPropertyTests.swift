import TestSupport
import Testing

@testable import LifelineProtocol

/// The byte-level shortcuts of the decoders and writers against the plain definition each one
/// shortcuts, on seeded random inputs weighted toward the bytes that matter.
@Suite("Byte shortcuts against their plain definitions, seeded", .timeLimit(.minutes(1)))
struct BytePathPropertyTests {
    /// A byte that is often one a shortcut must notice: a quote, a backslash, a control byte, the
    /// edges of ASCII, a UTF-8 lead or continuation byte.
    static func interestingByte(_ generator: inout SeededGenerator) -> UInt8 {
        let special: [UInt8] = [
            0x00, 0x1F, 0x20, 0x22, 0x5C, 0x7F, 0x80, 0xBF, 0xC0, 0xC2, 0xE0, 0xED, 0xF4, 0xF5,
        ]
        return Bool.random(using: &generator)
            ? special.randomElement(using: &generator)! : UInt8.random(in: 0x20...0x7E, using: &generator)
    }

    @Test(
        "eight bytes at a time: a word is plain exactly when each of its bytes is printable ASCII, not a quote or a backslash"
    )
    func plainWords() {
        var generator = SeededGenerator()
        for _ in 0..<50_000 {
            let bytes = (0..<8).map { _ in
                Int.random(in: 0..<8, using: &generator) == 0
                    ? Self.interestingByte(&generator) : UInt8.random(in: 0x20...0x7E, using: &generator)
            }
            let word = bytes.withUnsafeBytes { $0.loadUnaligned(as: UInt64.self) }
            let plain = bytes.allSatisfy { $0 >= 0x20 && $0 < 0x80 && $0 != 0x22 && $0 != 0x5C }
            #expect(JSONScanner<TapeRecord>.isPlain(word) == plain, "\(bytes), \(generator.replay)")
            for byte: UInt8 in [0x22, 0x5C, bytes[0], bytes[7]] {
                #expect(
                    ByteComparison.hasByte(byte, in: word) == bytes.contains(byte),
                    "\(bytes), \(generator.replay)")
            }
            if JSONScanner<TapeRecord>.isPlain(word) != plain { return }
        }
    }

    @Test(
        "UTF-8 is judged as the standard library judges it: overlong forms, surrogates and truncations refused"
    )
    func utf8() {
        var generator = SeededGenerator()
        let samples = ["é", "€", "𝄞", "\u{10FFFF}", "\u{D7FF}", "\u{E000}", "a"].map { Array($0.utf8) }
        for _ in 0..<100_000 {
            var bytes: [UInt8] = []
            for _ in 0..<Int.random(in: 0...6, using: &generator) {
                if Bool.random(using: &generator) {
                    var sample = samples.randomElement(using: &generator)!
                    if Int.random(in: 0..<4, using: &generator) == 0 {
                        sample[Int.random(in: 0..<sample.count, using: &generator)] = Self.interestingByte(
                            &generator)
                    }
                    if Int.random(in: 0..<6, using: &generator) == 0 { sample.removeLast() }
                    bytes += sample
                } else {
                    bytes.append(Self.interestingByte(&generator))
                }
            }
            let expected = String(validating: bytes, as: UTF8.self) != nil
            let judged = bytes.withUnsafeBufferPointer { UTF8Check.isValid($0) }
            #expect(judged == expected, "\(bytes), \(generator.replay)")
            if judged != expected { return }
        }
    }

    @Test(
        "byte comparisons say what == of the bytes says, for arrays, strings (shared or copied) and bus topics"
    )
    func comparisons() {
        var generator = SeededGenerator()
        // Literals share one representation when picked twice; the copies made at run time hold the
        // same bytes in a storage of their own (long ones) or the same small string.
        let literals = [
            "a.b", "a.K", "a.\u{212A}", "café", "cafe\u{301}", "", "a.bc", "app.didBecomeActive",
            "app.didBecomeActive.Kelvin", "app.didBecomeActive.\u{212A}elvin", "app.didBecomeActivf",
        ]
        let names = literals + literals.map { String(decoding: Array($0.utf8), as: UTF8.self) }
        for _ in 0..<20_000 {
            let a = (0..<Int.random(in: 0...10, using: &generator)).map { _ in
                UInt8.random(in: 0...3, using: &generator)
            }
            var b = Bool.random(using: &generator) ? a : a.shuffled(using: &generator)
            if Int.random(in: 0..<4, using: &generator) == 0 { b.append(0) }
            #expect(ByteComparison.equal(a, b) == (a == b), "\(a) \(b), \(generator.replay)")
            let (x, y) = (names.randomElement(using: &generator)!, names.randomElement(using: &generator)!)
            #expect(
                ByteComparison.equal(x, y) == (Array(x.utf8) == Array(y.utf8)),
                "\(x) \(y), \(generator.replay)")
        }
    }

    @Test("integers are written as their description, by the writer and by the exact-length cursor")
    func decimals() {
        var generator = SeededGenerator()
        for _ in 0..<50_000 {
            let bits = Int.random(in: 1...64, using: &generator)
            let magnitude = UInt64.random(in: 0...UInt64.max, using: &generator) >> (64 - bits)
            let positive = Int64(bitPattern: magnitude)
            let number = Bool.random(using: &generator) || positive == .min ? positive : -positive
            let expected = Array(String(number).utf8)
            var written: [UInt8] = []
            JSONWriter.writeInteger(number, into: &written)
            #expect(written == expected, "\(number), \(generator.replay)")
            #expect(ByteCursor.digits(of: number) == expected.count, "\(number)")
            #expect(
                ByteCursor.bytes(count: expected.count) { $0.put(decimal: number) } == expected, "\(number)")
            if written != expected { return }
        }
    }

    @Test(
        "numbers are read as their text says: an integer that fits Int64 exactly, any other number as a double"
    )
    func numbers() {
        var generator = SeededGenerator()
        func digits(_ count: Int) -> String {
            String((0..<count).map { _ in Character(String(Int.random(in: 0...9, using: &generator))) })
        }
        for _ in 0..<50_000 {
            var text = Bool.random(using: &generator) ? "-" : ""
            let length = Int.random(in: 1...21, using: &generator)
            text +=
                length == 1
                ? digits(1) : String(Int.random(in: 1...9, using: &generator)) + digits(length - 1)
            if Int.random(in: 0..<4, using: &generator) == 0 {
                text += "." + digits(Int.random(in: 1...4, using: &generator))
            }
            if Int.random(in: 0..<6, using: &generator) == 0 {
                text +=
                    ["e", "E", "e-", "e+"].randomElement(using: &generator)!
                    + digits(Int.random(in: 1...3, using: &generator))
            }
            let isInteger = !text.contains(".") && !text.lowercased().contains("e")
            let expected: JSONValue? =
                isInteger
                ? Int64(text).map { .int($0) } ?? Double(text).map { .double($0) }
                : Double(text).map { .double($0) }
            let read = Array(text.utf8).withUnsafeBufferPointer { JSONParser.number($0) }
            #expect(read == expected, "\(text), \(generator.replay)")
            if read != expected { return }
        }
    }
}
