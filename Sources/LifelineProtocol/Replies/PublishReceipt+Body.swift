extension PublishReceipt {
    /// The receipt in a PUBLISH reply body. The usual one — a single event, not acknowledged, in the
    /// exact form the broker writes (``body``) — is read in place; any other body is read through its
    /// declaration (``WireRecord``), and both give the same receipt.
    /// - Throws: ``ProtocolError`` (400) when the body is not a receipt, naming what is wrong.
    package init(body: [UInt8]) throws(ProtocolError) {
        if let plain = Self.plain(body) {
            self = plain
            return
        }
        try self.init(bytes: body)
    }

    /// `{"epoch":E,"event":"N"[,"lifecycle":"L"],"sequence":S,"subscribers":C}` and nothing else
    /// (no whitespace, no escapes in the strings), or nil.
    private static func plain(_ body: [UInt8]) -> PublishReceipt? {
        body.withUnsafeBufferPointer { bytes -> PublishReceipt? in
            var reader = PlainReader(bytes: bytes)
            guard reader.take(#"{"epoch":"#), let epoch = reader.integer(),
                reader.take(#","event":""#), let event = reader.plainString()
            else { return nil }
            var lifecycle: LifecycleState?
            if reader.take(#","lifecycle":""#) {
                guard let state = reader.plainString() else { return nil }
                lifecycle = LifecycleState(rawValue: state)
            }
            guard reader.take(#","sequence":"#), let sequence = reader.integer(),
                reader.take(#","subscribers":"#), let subscribers = reader.integer(),
                reader.take("}"), reader.atEnd
            else { return nil }
            return PublishReceipt(
                event: EventName(rawValue: event), sequence: UInt64(bitPattern: sequence),
                epoch: UInt64(bitPattern: epoch), subscribers: Int(subscribers), lifecycle: lifecycle)
        }
    }

    private struct PlainReader {
        let bytes: UnsafeBufferPointer<UInt8>
        var position = 0

        var atEnd: Bool { position == bytes.count }

        /// Consumes `text` when the bytes continue with it.
        mutating func take(_ text: StaticString) -> Bool {
            let count = text.utf8CodeUnitCount
            guard bytes.count - position >= count else { return false }
            for index in 0..<count where bytes[position + index] != text.utf8Start[index] { return false }
            position += count
            return true
        }

        /// An integer in plain notation that fits in Int64 (as the parser would read it), or nil.
        mutating func integer() -> Int64? {
            var index = position
            let negative = index < bytes.count && bytes[index] == UInt8(ascii: "-")
            if negative { index += 1 }
            let first = index
            var magnitude: UInt64 = 0
            while index < bytes.count, bytes[index] >= UInt8(ascii: "0"), bytes[index] <= UInt8(ascii: "9") {
                let (times, overflow) = magnitude.multipliedReportingOverflow(by: 10)
                let (sum, carry) = times.addingReportingOverflow(UInt64(bytes[index] - UInt8(ascii: "0")))
                guard !overflow, !carry else { return nil }
                magnitude = sum
                index += 1
            }
            let digits = index - first
            guard digits > 0, digits == 1 || bytes[first] != UInt8(ascii: "0") else { return nil }
            // A fraction or an exponent is the parser's to read.
            if index < bytes.count,
                bytes[index] == UInt8(ascii: ".") || bytes[index] | 0x20 == UInt8(ascii: "e")
            {
                return nil
            }
            let value: Int64
            if negative {
                guard magnitude <= UInt64(Int64.max) + 1 else { return nil }
                value = magnitude == UInt64(Int64.max) + 1 ? .min : -Int64(magnitude)
            } else {
                guard magnitude <= UInt64(Int64.max) else { return nil }
                value = Int64(magnitude)
            }
            position = index
            return value
        }

        /// A string's text up to its closing quote (consumed), when it has no escapes, no control
        /// characters and is valid UTF-8; nil otherwise.
        mutating func plainString() -> String? {
            var index = position
            while index < bytes.count, bytes[index] != UInt8(ascii: "\"") {
                guard bytes[index] >= 0x20, bytes[index] != UInt8(ascii: "\\") else { return nil }
                index += 1
            }
            guard index < bytes.count else { return nil }
            let text = UnsafeBufferPointer(rebasing: bytes[position..<index])
            guard UTF8Check.isValid(text) else { return nil }
            position = index + 1
            return String(decoding: text, as: UTF8.self)
        }
    }
}
