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
                "\(fields.what) '\(key)' must be a non-negative integer, not \(read.typeName)")
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

    package mutating func check(_ problem: @autoclosure () -> String?) throws(ProtocolError) {
        if let problem = problem() { throw fields.problem("\(fields.what) \(problem)") }
    }
}
