/// Writes the fields a ``HeaderMessage`` declares as a JSON object, straight into bytes.
package struct HeaderWriter: HeaderVisitor {
    package typealias Failure = Never
    private var object: JSONObjectWriter

    /// A writer of fields declared in sorted order, or (`sortingKeys`) in any order, put in order
    /// when the object is finished.
    package init(sortingKeys: Bool = false) {
        object = JSONObjectWriter(capacity: 96, sortingKeys: sortingKeys)
    }

    package mutating func finish() -> [UInt8] { object.finish() }

    package mutating func field(_ key: StaticString, _ value: inout String) {
        object.add(key, value)
    }

    package mutating func field(_ key: StaticString, _ value: inout String?) {
        if let value { object.add(key, value) }
    }

    package mutating func field(_ key: StaticString, _ value: inout Bool, default fallback: Bool) {
        if value != fallback { object.add(key, value) }
    }

    package mutating func field(_ key: StaticString, _ value: inout Bool?) {
        if let value { object.add(key, value) }
    }

    package mutating func field(_ key: StaticString, _ value: inout Int, in range: ClosedRange<Int>) {
        object.add(key, Int64(value))
    }

    package mutating func field(_ key: StaticString, _ value: inout Int?, in range: ClosedRange<Int>) {
        if let value { object.add(key, Int64(value)) }
    }

    package mutating func field(_ key: StaticString, _ value: inout UInt64, bitPattern: Bool) {
        object.add(key, Int64(bitPattern: value))
    }

    package mutating func field(_ key: StaticString, _ value: inout UInt64?, bitPattern: Bool) {
        if let value { object.add(key, Int64(bitPattern: value)) }
    }

    package mutating func field(_ key: StaticString, _ value: inout [String]) {
        if !value.isEmpty { object.add(key, .array(value.map { .string($0) })) }
    }

    package mutating func field(
        _ key: StaticString, _ value: inout Int, in range: ClosedRange<Int>, default fallback: Int
    ) {
        object.add(key, Int64(value))
    }

    package mutating func field(_ key: StaticString, object value: inout JSONValue?) {
        if let value { object.add(key, value) }
    }

    package mutating func field(_ key: StaticString, any value: inout JSONValue?) {
        if let value { object.add(key, value) }
    }

    package mutating func field(_ key: StaticString, any value: inout JSONValue, default fallback: JSONValue)
    {
        object.add(key, value)
    }

    package mutating func field<Choice: RawRepresentable & CaseIterable>(
        _ key: StaticString, _ value: inout Choice, default fallback: Choice
    ) where Choice.RawValue == String {
        object.add(key, value.rawValue)
    }

    package mutating func field<Choice: RawRepresentable & CaseIterable>(
        _ key: StaticString, _ value: inout Choice?
    )
    where Choice.RawValue == String {
        if let value { object.add(key, value.rawValue) }
    }

    package mutating func field(_ key: StaticString, tolerant value: inout String?) {
        if let value { object.add(key, value) }
    }

    package mutating func field(_ key: StaticString, tolerant value: inout Bool, default fallback: Bool) {
        if value != fallback { object.add(key, value) }
    }

    package mutating func field(_ key: StaticString, tolerant value: inout UInt64?, bitPattern: Bool) {
        if let value { object.add(key, Int64(bitPattern: value)) }
    }

    package mutating func field(_ key: StaticString, _ value: inout String, default fallback: String) {
        object.add(key, value)
    }

    package mutating func field(_ key: StaticString, nullable value: inout String?) {
        if let value { object.add(key, value) } else { object.add(key, JSONValue.null) }
    }

    package mutating func field(_ key: StaticString, always value: inout Bool, default fallback: Bool) {
        object.add(key, value)
    }

    package mutating func field(_ key: StaticString, nullable value: inout Int64?) {
        if let value { object.add(key, value) } else { object.add(key, JSONValue.null) }
    }

    package mutating func field(_ key: StaticString, nullable value: inout Double?) {
        if let value, value.isFinite {
            object.add(key, JSONValue.double(value))
        } else {
            object.add(key, JSONValue.null)
        }
    }

    package mutating func field(_ key: StaticString, numbers value: inout [Double]) {
        object.add(key, JSONValue.array(value.map(JSONValue.double)))
    }

    package mutating func field(_ key: StaticString, integers value: inout [Int64]) {
        var text: [UInt8] = [UInt8(ascii: "[")]
        for (index, number) in value.enumerated() {
            if index > 0 { text.append(UInt8(ascii: ",")) }
            JSONWriter.writeInteger(number, into: &text)
        }
        text.append(UInt8(ascii: "]"))
        object.add(key, text: text)
    }

    package mutating func field(_ key: StaticString, _ value: inout Int64, default fallback: Int64) {
        object.add(key, value)
    }

    package mutating func field(
        _ key: StaticString, _ value: inout UInt64, default fallback: UInt64, bitPattern: Bool
    ) {
        object.add(key, Int64(bitPattern: value))
    }

    package mutating func field<Choice: RawRepresentable & CaseIterable>(
        _ key: StaticString, choice value: inout Choice
    ) where Choice.RawValue == String {
        object.add(key, value.rawValue)
    }

    package mutating func field(_ key: StaticString, list value: inout [String]) {
        object.add(key, .array(value.map { .string($0) }))
    }

    package mutating func field<Record: WireRecord>(_ key: StaticString, record value: inout Record) {
        object.add(key, text: value.bytes)
    }

    package mutating func field<Record: WireRecord>(
        _ key: StaticString, record value: inout Record, default fallback: Record
    ) {
        object.add(key, text: value.bytes)
    }

    package mutating func field<Record: WireRecord>(_ key: StaticString, record value: inout Record?) {
        if let value { object.add(key, text: value.bytes) }
    }

    package mutating func field<Record: WireRecord>(_ key: StaticString, nullableRecord value: inout Record?)
    {
        if let value { object.add(key, text: value.bytes) } else { object.add(key, JSONValue.null) }
    }

    package mutating func field<Name: RawRepresentable & Hashable>(
        _ key: StaticString, _ value: inout [Name: Int], in range: ClosedRange<Int>
    ) where Name.RawValue == String {
        var text: [UInt8] = [UInt8(ascii: "{")]
        for (index, member) in value.sorted(by: { $0.key.rawValue < $1.key.rawValue }).enumerated() {
            if index > 0 { text.append(UInt8(ascii: ",")) }
            JSONWriter.writeString(member.key.rawValue, into: &text)
            text.append(UInt8(ascii: ":"))
            JSONWriter.writeInteger(Int64(member.value), into: &text)
        }
        text.append(UInt8(ascii: "}"))
        object.add(key, text: text)
    }

    package mutating func field(_ key: StaticString, strings value: inout [String: String]) {
        var text: [UInt8] = [UInt8(ascii: "{")]
        for (index, member) in value.sorted(by: { $0.key < $1.key }).enumerated() {
            if index > 0 { text.append(UInt8(ascii: ",")) }
            JSONWriter.writeString(member.key, into: &text)
            text.append(UInt8(ascii: ":"))
            JSONWriter.writeString(member.value, into: &text)
        }
        text.append(UInt8(ascii: "}"))
        object.add(key, text: text)
    }

    package mutating func field(_ key: StaticString, optionalList value: inout [String]?) {
        if let value { object.add(key, .array(value.map { .string($0) })) }
    }

    package mutating func field<Name: RawRepresentable & Hashable>(
        _ key: StaticString, _ value: inout [Name: Int]?, in range: ClosedRange<Int>
    ) where Name.RawValue == String {
        guard var present = value else { return }
        field(key, &present, in: range)
    }

    package mutating func field<Record: WireRecord>(_ key: StaticString, records value: inout [Record]) {
        var text: [UInt8] = [UInt8(ascii: "[")]
        for (index, record) in value.enumerated() {
            if index > 0 { text.append(UInt8(ascii: ",")) }
            text.append(contentsOf: record.bytes)
        }
        text.append(UInt8(ascii: "]"))
        object.add(key, text: text)
    }

    package mutating func field<Record: WireRecord>(
        _ key: StaticString, optionalRecords value: inout [Record]?
    ) {
        guard var present = value else { return }
        field(key, records: &present)
    }

    package mutating func field<Name: RawRepresentable & Hashable, Record: WireRecord>(
        _ key: StaticString, records value: inout [Name: Record]
    ) where Name.RawValue == String {
        var text: [UInt8] = [UInt8(ascii: "{")]
        for (index, member) in value.sorted(by: { $0.key.rawValue < $1.key.rawValue }).enumerated() {
            if index > 0 { text.append(UInt8(ascii: ",")) }
            JSONWriter.writeString(member.key.rawValue, into: &text)
            text.append(UInt8(ascii: ":"))
            text.append(contentsOf: member.value.bytes)
        }
        text.append(UInt8(ascii: "}"))
        object.add(key, text: text)
    }

    package func receivedSize(of key: StaticString) -> Int? { nil }

    package mutating func check(_ problem: @autoclosure () -> String?) {}
}
