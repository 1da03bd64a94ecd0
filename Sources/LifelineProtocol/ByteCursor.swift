/// Writes bytes into memory sized beforehand (see ``ByteCursor/bytes(count:_:)``): for hot-path
/// encoders whose exact length is known, one allocation and no growth checks.
struct ByteCursor {
    private let start: UnsafeMutablePointer<UInt8>
    private let count: Int
    private(set) var position = 0

    private init(_ start: UnsafeMutablePointer<UInt8>, count: Int) {
        self.start = start
        self.count = count
    }

    private func reserve(_ bytes: Int) {
        precondition(position + bytes <= count, "ByteCursor: \(position + bytes) bytes written into \(count)")
    }

    /// An array of exactly `count` bytes, all written by `write` (checked).
    static func bytes(count: Int, _ write: (inout ByteCursor) -> Void) -> [UInt8] {
        // Written on the stack, then copied into an array made from a typed buffer: on Linux,
        // Array(unsafeUninitializedCapacity:) and Array(repeating:count:) take the unspecialized
        // allocation path of the runtime (about 4× the instructions of the copy).
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: count) { buffer in
            var cursor = ByteCursor(buffer.baseAddress!, count: count)
            write(&cursor)
            precondition(cursor.position == count, "ByteCursor: wrote \(cursor.position) of \(count) bytes")
            return Array(UnsafeBufferPointer(rebasing: buffer[0..<count]))
        }
    }

    mutating func put(_ byte: UInt8) {
        reserve(1)
        start[position] = byte
        position += 1
    }

    mutating func put(_ text: StaticString) {
        reserve(text.utf8CodeUnitCount)
        (start + position).update(from: text.utf8Start, count: text.utf8CodeUnitCount)
        position += text.utf8CodeUnitCount
    }

    mutating func put(_ bytes: UnsafeBufferPointer<UInt8>) {
        guard let base = bytes.baseAddress else { return }
        reserve(bytes.count)
        (start + position).update(from: base, count: bytes.count)
        position += bytes.count
    }

    /// Writes `number` in decimal (``digits(of:)`` bytes).
    mutating func put(decimal number: Int64) {
        var magnitude = number.magnitude
        if number < 0 { put(UInt8(ascii: "-")) }
        let end = position + Self.digitCount(of: magnitude)
        reserve(end - position)
        var index = end
        repeat {
            index -= 1
            start[index] = UInt8(ascii: "0") + UInt8(truncatingIfNeeded: magnitude % 10)
            magnitude /= 10
        } while magnitude > 0
        position = end
    }

    /// How many bytes ``put(decimal:)`` writes for `number`.
    static func digits(of number: Int64) -> Int {
        digitCount(of: number.magnitude) + (number < 0 ? 1 : 0)
    }

    private static func digitCount(of magnitude: UInt64) -> Int {
        var count = 1
        var rest = magnitude
        while rest >= 10 {
            rest /= 10
            count += 1
        }
        return count
    }
}
