import Glibc

/// Byte comparisons for the hot decoding paths, over contiguous memory (the generic `==` of two
/// arrays, and `elementsEqual` of a String's UTF-8 view, cost 10–20× as many instructions).
enum ByteComparison {
    /// True when `a` and `b` hold the same bytes.
    static func equal(_ a: [UInt8], _ b: [UInt8]) -> Bool {
        guard a.count == b.count else { return false }
        return a.withUnsafeBufferPointer { x in
            b.withUnsafeBufferPointer { y in same(x, y) }
        }
    }

    /// True when `a` and `b` have the same UTF-8 bytes (not merely canonically equivalent text).
    static func equal(_ a: String, _ b: String) -> Bool {
        // One representation — a storage both share, or the same small string — holds one text: a
        // name copied along a batch is recognized without reading it.
        if sameRepresentation(a, b) { return true }
        let (x, y) = (a.utf8, b.utf8)
        guard x.count == y.count else { return false }
        return x.withContiguousStorageIfAvailable { p in
            y.withContiguousStorageIfAvailable { q in same(p, q) } ?? x.elementsEqual(y)
        } ?? x.elementsEqual(y)
    }

    /// True when `a` holds the bytes of `text` (a literal: no global to initialize on each use).
    static func equal(_ a: [UInt8], _ text: StaticString) -> Bool {
        a.withUnsafeBytes { equal($0, text) }
    }

    /// True when `a` holds the bytes of `text`.
    static func equal(_ a: UnsafeRawBufferPointer, _ text: StaticString) -> Bool {
        a.count == text.utf8CodeUnitCount
            && same(
                a.assumingMemoryBound(to: UInt8.self),
                UnsafeBufferPointer(start: text.utf8Start, count: text.utf8CodeUnitCount))
    }

    /// True when one of the eight bytes of `word` is `byte` (a test of all eight at once).
    static func hasByte(_ byte: UInt8, in word: UInt64) -> Bool {
        let ones: UInt64 = 0x0101_0101_0101_0101
        let value = word ^ (UInt64(byte) &* ones)
        // A byte of `value` is zero exactly when the subtraction borrows into its high bit.
        return (value &- ones) & ~value & 0x8080_8080_8080_8080 != 0
    }

    /// True when `a` and `b` are the same bits (two equal bit patterns of one value type are one value).
    static func sameRepresentation<T>(_ a: T, _ b: T) -> Bool {
        withUnsafeBytes(of: a) { x in
            withUnsafeBytes(of: b) { y in memcmp(x.baseAddress!, y.baseAddress!, x.count) == 0 }
        }
    }

    private static func same(_ x: UnsafeBufferPointer<UInt8>, _ y: UnsafeBufferPointer<UInt8>) -> Bool {
        guard x.count == y.count else { return false }
        for index in 0..<x.count where x[index] != y[index] { return false }
        return true
    }
}
