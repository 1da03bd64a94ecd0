/// What a ``HeaderMessage`` declares its fields to: a reader fills each from a received header, a
/// writer writes each. Absent optionals and fields at their default are not written.
package protocol HeaderVisitor {
    /// What reading a field may throw (a writer throws nothing).
    associatedtype Failure: Error

    /// A string that must be present.
    mutating func field(_ key: StaticString, _ value: inout String) throws(Failure)
    /// A string that may be absent (or null).
    mutating func field(_ key: StaticString, _ value: inout String?) throws(Failure)
    /// `true` or `false`; absent means `fallback`, and `fallback` is not written.
    mutating func field(_ key: StaticString, _ value: inout Bool, default fallback: Bool) throws(Failure)
    /// `true` or `false`, or absent.
    mutating func field(_ key: StaticString, _ value: inout Bool?) throws(Failure)
    /// An integer within `range` that must be present.
    mutating func field(_ key: StaticString, _ value: inout Int, in range: ClosedRange<Int>) throws(Failure)
    /// An integer within `range`, or absent.
    mutating func field(_ key: StaticString, _ value: inout Int?, in range: ClosedRange<Int>) throws(Failure)
    /// An unsigned 64-bit number (an epoch, a sequence) that must be present, written as the
    /// integer with its bit pattern; `bitPattern` reads a negative integer back that way, else a
    /// negative one is refused.
    mutating func field(_ key: StaticString, _ value: inout UInt64, bitPattern: Bool) throws(Failure)
    /// An unsigned 64-bit number, or absent.
    mutating func field(_ key: StaticString, _ value: inout UInt64?, bitPattern: Bool) throws(Failure)
    /// An array of strings; absent means empty, and empty is not written.
    mutating func field(_ key: StaticString, _ value: inout [String]) throws(Failure)
    /// An integer within `range`; absent means `fallback`, which is written all the same.
    mutating func field(
        _ key: StaticString, _ value: inout Int, in range: ClosedRange<Int>, default fallback: Int)
        throws(Failure)
    /// A JSON object, or absent.
    mutating func field(_ key: StaticString, object value: inout JSONValue?) throws(Failure)
    /// Any JSON value, or absent (or null).
    mutating func field(_ key: StaticString, any value: inout JSONValue?) throws(Failure)
    /// Any JSON value; absent means `fallback`, which is written all the same.
    mutating func field(_ key: StaticString, any value: inout JSONValue, default fallback: JSONValue)
        throws(Failure)
    /// One of an enumeration's names; absent means `fallback`, which is written all the same.
    mutating func field<Choice: RawRepresentable & CaseIterable>(
        _ key: StaticString, _ value: inout Choice, default fallback: Choice
    ) throws(Failure) where Choice.RawValue == String
    /// One of an enumeration's names, or absent.
    mutating func field<Choice: RawRepresentable & CaseIterable>(_ key: StaticString, _ value: inout Choice?)
        throws(Failure) where Choice.RawValue == String
    /// Tolerant fields, for what a peer may add or get wrong without harm (counts in a heartbeat, an
    /// operation's fields it does not use): a value of another kind is read as absent, not refused.
    /// A string, or absent.
    mutating func field(_ key: StaticString, tolerant value: inout String?) throws(Failure)
    /// `true` or `false`; absent (or another kind) means `fallback`, which is not written.
    mutating func field(_ key: StaticString, tolerant value: inout Bool, default fallback: Bool)
        throws(Failure)
    /// An unsigned 64-bit number, or absent: a negative integer is read as 0 (with `bitPattern`, as
    /// its 64 bits), anything else as absent.
    mutating func field(_ key: StaticString, tolerant value: inout UInt64?, bitPattern: Bool) throws(Failure)
    /// Fields of replies and records, each written whatever its value.
    /// A string; absent means `fallback`.
    mutating func field(_ key: StaticString, _ value: inout String, default fallback: String) throws(Failure)
    /// A string, or null (written as null).
    mutating func field(_ key: StaticString, nullable value: inout String?) throws(Failure)
    /// A 64-bit integer, or null (written as null).
    mutating func field(_ key: StaticString, nullable value: inout Int64?) throws(Failure)
    /// A number, or null (written as null; so is a number that is not finite).
    mutating func field(_ key: StaticString, nullable value: inout Double?) throws(Failure)
    /// An array of numbers; absent means empty.
    mutating func field(_ key: StaticString, numbers value: inout [Double]) throws(Failure)
    /// An array of 64-bit integers; absent means empty.
    mutating func field(_ key: StaticString, integers value: inout [Int64]) throws(Failure)
    /// `true` or `false`; absent means `fallback`.
    mutating func field(_ key: StaticString, always value: inout Bool, default fallback: Bool) throws(Failure)
    /// A 64-bit integer; absent means `fallback`.
    mutating func field(_ key: StaticString, _ value: inout Int64, default fallback: Int64) throws(Failure)
    /// An unsigned 64-bit number, as ``field(_:_:bitPattern:)-(_,UInt64,_)``; absent means `fallback`.
    mutating func field(
        _ key: StaticString, _ value: inout UInt64, default fallback: UInt64, bitPattern: Bool)
        throws(Failure)
    /// One of an enumeration's names, which must be present.
    mutating func field<Choice: RawRepresentable & CaseIterable>(
        _ key: StaticString, choice value: inout Choice)
        throws(Failure) where Choice.RawValue == String
    /// An array of strings; absent means empty.
    mutating func field(_ key: StaticString, list value: inout [String]) throws(Failure)
    /// An object declared as its own record, which must be present.
    mutating func field<Record: WireRecord>(_ key: StaticString, record value: inout Record) throws(Failure)
    /// An object declared as its own record; absent (or null) means `fallback`.
    mutating func field<Record: WireRecord>(
        _ key: StaticString, record value: inout Record, default fallback: Record
    ) throws(Failure)
    /// An object declared as its own record, or absent (not written when nil).
    mutating func field<Record: WireRecord>(_ key: StaticString, record value: inout Record?) throws(Failure)
    /// An object declared as its own record, or null (written as null when nil).
    mutating func field<Record: WireRecord>(_ key: StaticString, nullableRecord value: inout Record?)
        throws(Failure)
    /// An object of integers within `range` by name; absent means empty.
    mutating func field<Name: RawRepresentable & Hashable>(
        _ key: StaticString, _ value: inout [Name: Int], in range: ClosedRange<Int>
    ) throws(Failure) where Name.RawValue == String
    /// An object of strings by name; absent means empty, and empty is written all the same.
    mutating func field(_ key: StaticString, strings value: inout [String: String]) throws(Failure)
    /// An array of strings, or absent (nil, not written).
    mutating func field(_ key: StaticString, optionalList value: inout [String]?) throws(Failure)
    /// An object of integers within `range` by name, or absent (nil, not written).
    mutating func field<Name: RawRepresentable & Hashable>(
        _ key: StaticString, _ value: inout [Name: Int]?, in range: ClosedRange<Int>
    ) throws(Failure) where Name.RawValue == String
    /// An array of records; absent means empty.
    mutating func field<Record: WireRecord>(_ key: StaticString, records value: inout [Record])
        throws(Failure)
    /// An array of records, or absent (nil, not written).
    mutating func field<Record: WireRecord>(_ key: StaticString, optionalRecords value: inout [Record]?)
        throws(Failure)
    /// An object whose members are records, by name; absent means empty.
    mutating func field<Name: RawRepresentable & Hashable, Record: WireRecord>(
        _ key: StaticString, records value: inout [Name: Record]
    ) throws(Failure) where Name.RawValue == String
    /// How many bytes the text of `key`'s value has as it came (a reader; a writer says nil): for a
    /// limit on what a peer may send.
    func receivedSize(of key: StaticString) -> Int?
    /// A rule over the fields read so far: a reader refuses the header with `problem` (prefixed with
    /// the command) when it is not nil; a writer does nothing.
    mutating func check(_ problem: @autoclosure () -> String?) throws(Failure)
}
