/// Reads the fields a ``HeaderMessage`` declares from a received header; each error names the
/// command, the field and what was wrong.
package struct HeaderReader: HeaderVisitor {
    package typealias Failure = ProtocolError
    let fields: HeaderFields

    init(_ fields: HeaderFields) { self.fields = fields }

    package mutating func field(_ key: StaticString, _ value: inout String) throws(ProtocolError) {
        value = try fields.string(key.description)
    }

    package mutating func field(_ key: StaticString, _ value: inout String?) throws(ProtocolError) {
        value = try fields.optionalString(key.description)
    }

    package mutating func field(_ key: StaticString, _ value: inout Bool, default fallback: Bool)
        throws(ProtocolError)
    {
        value = try fields.bool(key.description, default: fallback)
    }

    package mutating func field(_ key: StaticString, _ value: inout Bool?) throws(ProtocolError) {
        value = try fields.optionalBool(key.description)
    }

    package mutating func field(_ key: StaticString, _ value: inout Int, in range: ClosedRange<Int>)
        throws(ProtocolError)
    {
        value = try fields.integer(key.description, in: range)
    }

    package mutating func field(_ key: StaticString, _ value: inout Int?, in range: ClosedRange<Int>)
        throws(ProtocolError)
    {
        value = try fields.optionalInteger(key.description, in: range)
    }

    package mutating func field(_ key: StaticString, _ value: inout UInt64, bitPattern: Bool)
        throws(ProtocolError)
    {
        var read: UInt64?
        try field(key, &read, bitPattern: bitPattern)
        guard let read else { throw fields.problem("\(fields.what) needs an integer '\(key)'") }
        value = read
    }

    package mutating func field(_ key: StaticString, _ value: inout UInt64?, bitPattern: Bool)
        throws(ProtocolError)
    {
        guard let read = fields.value(key.description) else {
            value = nil
            return
        }
        guard let number = read.intValue else {
            throw fields.problem(
                bitPattern
                    ? "\(fields.what) '\(key)' must be an integer within -2^63...2^63-1, not \(read.typeName)"
                    : "\(fields.what) '\(key)' must be a non-negative integer, not \(read.typeName)")
        }
        guard bitPattern || number >= 0 else {
            throw fields.problem("\(fields.what) '\(key)' must be a non-negative integer, not \(number)")
        }
        value = UInt64(bitPattern: number)
    }

    package mutating func field(_ key: StaticString, _ value: inout [String]) throws(ProtocolError) {
        value = try fields.strings(key.description)
    }

    package mutating func field(
        _ key: StaticString, _ value: inout Int, in range: ClosedRange<Int>, default fallback: Int
    ) throws(ProtocolError) {
        value = try fields.optionalInteger(key.description, in: range) ?? fallback
    }

    package mutating func field(_ key: StaticString, object value: inout JSONValue?) throws(ProtocolError) {
        value = try fields.optionalObject(key.description)
    }

    package mutating func field(_ key: StaticString, any value: inout JSONValue?) throws(ProtocolError) {
        value = fields.value(key.description)
    }

    package mutating func field(_ key: StaticString, any value: inout JSONValue, default fallback: JSONValue)
        throws(ProtocolError)
    {
        value = fields.value(key.description) ?? fallback
    }

    package mutating func field<Choice: RawRepresentable & CaseIterable>(
        _ key: StaticString, _ value: inout Choice, default fallback: Choice
    ) throws(ProtocolError) where Choice.RawValue == String {
        var read: Choice?
        try field(key, &read)
        value = read ?? fallback
    }

    package mutating func field<Choice: RawRepresentable & CaseIterable>(
        _ key: StaticString, _ value: inout Choice?
    )
        throws(ProtocolError) where Choice.RawValue == String
    {
        guard let name = try fields.optionalString(key.description) else {
            value = nil
            return
        }
        guard let choice = Choice(rawValue: name) else {
            let names = Choice.allCases.map(\.rawValue)
            let list =
                names.dropLast().joined(separator: ", ") + (names.count > 1 ? " or " : "")
                + (names.last ?? "")
            throw fields.problem("\(fields.what) \(key) must be \(list), not '\(name)'")
        }
        value = choice
    }

    package mutating func field(_ key: StaticString, tolerant value: inout String?) throws(ProtocolError) {
        value = fields.value(key.description)?.stringValue
    }

    package mutating func field(_ key: StaticString, tolerant value: inout Bool, default fallback: Bool)
        throws(ProtocolError)
    {
        value = fields.value(key.description)?.boolValue ?? fallback
    }

    package mutating func field(_ key: StaticString, tolerant value: inout UInt64?, bitPattern: Bool)
        throws(ProtocolError)
    {
        value = fields.value(key.description)?.intValue.map {
            bitPattern ? UInt64(bitPattern: $0) : UInt64(max(0, $0))
        }
    }

    package mutating func field(_ key: StaticString, _ value: inout String, default fallback: String)
        throws(ProtocolError)
    {
        value = try fields.optionalString(key.description) ?? fallback
    }

    package mutating func field(_ key: StaticString, nullable value: inout String?) throws(ProtocolError) {
        value = try fields.optionalString(key.description)
    }

    package mutating func field(_ key: StaticString, always value: inout Bool, default fallback: Bool)
        throws(ProtocolError)
    {
        value = try fields.bool(key.description, default: fallback)
    }

    package mutating func field(_ key: StaticString, nullable value: inout Int64?) throws(ProtocolError) {
        value = try scalar(key, "an integer", \.intValue)
    }

    package mutating func field(_ key: StaticString, nullable value: inout Double?) throws(ProtocolError) {
        value = try scalar(key, "a number", \.doubleValue)
    }

    package mutating func field(_ key: StaticString, numbers value: inout [Double]) throws(ProtocolError) {
        value = try elements(key, "a number", \.doubleValue)
    }

    package mutating func field(_ key: StaticString, integers value: inout [Int64]) throws(ProtocolError) {
        value = try elements(key, "an integer", \.intValue)
    }

    package mutating func field(_ key: StaticString, _ value: inout Int64, default fallback: Int64)
        throws(ProtocolError)
    {
        value = try scalar(key, "an integer", \.intValue) ?? fallback
    }

    /// The value of `key` as `convert` reads it (nil when absent or null); anything else is refused
    /// as not being `kind`.
    private func scalar<Value>(_ key: StaticString, _ kind: String, _ convert: (JSONValue) -> Value?)
        throws(ProtocolError) -> Value?
    {
        guard let read = fields.value(key.description) else { return nil }
        guard let value = convert(read) else {
            throw fields.problem("\(fields.what) '\(key)' must be \(kind), not \(read.typeName)")
        }
        return value
    }

    /// The elements of the array at `key` (empty when absent or null), each as `convert` reads it.
    private func elements<Value>(_ key: StaticString, _ kind: String, _ convert: (JSONValue) -> Value?)
        throws(ProtocolError) -> [Value]
    {
        var values: [Value] = []
        for (position, index) in try fields.elements(key.description).enumerated() {
            guard let value = convert(fields.document.value(at: index)) else {
                throw fields.problem("\(fields.what) '\(key)'[\(position)] must be \(kind)")
            }
            values.append(value)
        }
        return values
    }

    package mutating func field(
        _ key: StaticString, _ value: inout UInt64, default fallback: UInt64, bitPattern: Bool
    ) throws(ProtocolError) {
        var read: UInt64?
        try field(key, &read, bitPattern: bitPattern)
        value = read ?? fallback
    }

    package mutating func field<Choice: RawRepresentable & CaseIterable>(
        _ key: StaticString, choice value: inout Choice
    ) throws(ProtocolError) where Choice.RawValue == String {
        var read: Choice?
        try field(key, &read)
        guard let read else { throw fields.problem("\(fields.what) needs a string '\(key)'") }
        value = read
    }

    package mutating func field(_ key: StaticString, list value: inout [String]) throws(ProtocolError) {
        value = try fields.strings(key.description)
    }

    package mutating func field<Record: WireRecord>(_ key: StaticString, record value: inout Record)
        throws(ProtocolError)
    {
        guard let nested = try fields.nested(key.description) else {
            throw fields.problem("\(fields.what) needs an object '\(key)'")
        }
        value = try Record(nested)
    }

    package mutating func field<Record: WireRecord>(
        _ key: StaticString, record value: inout Record, default fallback: Record
    ) throws(ProtocolError) {
        value =
            try fields.nested(key.description).map { (nested) throws(ProtocolError) in try Record(nested) }
            ?? fallback
    }

    package mutating func field<Record: WireRecord>(_ key: StaticString, record value: inout Record?)
        throws(ProtocolError)
    {
        value = try fields.nested(key.description).map { (nested) throws(ProtocolError) in try Record(nested)
        }
    }

    package mutating func field<Record: WireRecord>(_ key: StaticString, nullableRecord value: inout Record?)
        throws(ProtocolError)
    {
        try field(key, record: &value)
    }

    package mutating func field<Name: RawRepresentable & Hashable>(
        _ key: StaticString, _ value: inout [Name: Int], in range: ClosedRange<Int>
    ) throws(ProtocolError) where Name.RawValue == String {
        var numbers: [Name: Int] = [:]
        for (name, index) in try fields.members(key.description) {
            guard let typed = Name(rawValue: name) else {
                throw fields.problem("\(fields.what) '\(key)' names '\(name)', which is not a valid name")
            }
            guard let number = fields.document.value(at: index).intValue, range.contains(Int(number)) else {
                throw fields.problem(
                    "\(fields.what) '\(key).\(name)' must be an integer within \(range.lowerBound)...\(range.upperBound)"
                )
            }
            numbers[typed] = Int(number)
        }
        value = numbers
    }

    package mutating func field(_ key: StaticString, strings value: inout [String: String])
        throws(ProtocolError)
    {
        var strings: [String: String] = [:]
        for (name, index) in try fields.members(key.description) {
            let kind = fields.document[index].kind
            guard kind == .string || kind == .escapedString else {
                throw fields.problem("\(fields.what) '\(key).\(name)' must be a string")
            }
            strings[name] = fields.document.string(at: index)
        }
        value = strings
    }

    package mutating func field(_ key: StaticString, optionalList value: inout [String]?)
        throws(ProtocolError)
    {
        value = fields.value(key.description) == nil ? nil : try fields.strings(key.description)
    }

    package mutating func field<Name: RawRepresentable & Hashable>(
        _ key: StaticString, _ value: inout [Name: Int]?, in range: ClosedRange<Int>
    ) throws(ProtocolError) where Name.RawValue == String {
        guard fields.value(key.description) != nil else {
            value = nil
            return
        }
        var numbers: [Name: Int] = [:]
        try field(key, &numbers, in: range)
        value = numbers
    }

    package mutating func field<Record: WireRecord>(_ key: StaticString, records value: inout [Record])
        throws(ProtocolError)
    {
        var records: [Record] = []
        for (position, index) in try fields.elements(key.description).enumerated() {
            records.append(try Record(fields.nested(at: index, what: "\(fields.what) '\(key)'[\(position)]")))
        }
        value = records
    }

    package mutating func field<Record: WireRecord>(
        _ key: StaticString, optionalRecords value: inout [Record]?
    ) throws(ProtocolError) {
        guard fields.value(key.description) != nil else {
            value = nil
            return
        }
        var records: [Record] = []
        try field(key, records: &records)
        value = records
    }

    package mutating func field<Name: RawRepresentable & Hashable, Record: WireRecord>(
        _ key: StaticString, records value: inout [Name: Record]
    ) throws(ProtocolError) where Name.RawValue == String {
        var records: [Name: Record] = [:]
        for (name, index) in try fields.members(key.description) {
            guard let typed = Name(rawValue: name) else {
                throw fields.problem("\(fields.what) '\(key)' names '\(name)', which is not a valid name")
            }
            records[typed] = try Record(fields.nested(at: index, what: "\(fields.what) '\(key).\(name)'"))
        }
        value = records
    }

    package func receivedSize(of key: StaticString) -> Int? {
        guard let index = fields.document.member(key.description, of: fields.root) else { return nil }
        return fields.document[index].end - fields.document[index].start
    }

    package mutating func check(_ problem: @autoclosure () -> String?) throws(ProtocolError) {
        if let problem = problem() { throw fields.problem("\(fields.what) \(problem)") }
    }
}
