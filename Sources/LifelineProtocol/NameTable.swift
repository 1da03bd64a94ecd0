/// A value per event name, where the name used last is found again without hashing: events come in
/// runs of one name (a batch, a stream), and a run's every event reads and updates the same entry.
/// The remembered name is taken only when its bytes repeat (``EventName/isIdentical(to:)``); any
/// other goes through the dictionary, which the table keeps whole for readers. The broker's
/// sequencer and journal and a connection's topic cursors keep their state per name in one.
package struct NameTable<Value> {
    package private(set) var values: [EventName: Value]
    /// The name updated last and its place in ``values`` (valid until a name is added or removed).
    private var last: (name: EventName, index: Dictionary<EventName, Value>.Index)?

    package init(_ values: [EventName: Value] = [:]) { self.values = values }

    package subscript(name: EventName) -> Value? {
        if let last, name.isIdentical(to: last.name) { return values.values[last.index] }
        return values[name]
    }

    /// Changes the value of `name` (`initial` when it has none) and returns the new value.
    @discardableResult
    package mutating func update(_ name: EventName, initial: Value, _ change: (inout Value) -> Void) -> Value
    {
        let index: Dictionary<EventName, Value>.Index
        if let last, name.isIdentical(to: last.name) {
            index = last.index
        } else if let found = values.index(forKey: name) {
            index = found
        } else {
            values[name] = initial
            index = values.index(forKey: name)!
        }
        last = (name, index)
        change(&values.values[index])
        return values.values[index]
    }

    /// Merges `other` in, keeping what `keep` chooses where both have a name.
    package mutating func merge(_ other: [EventName: Value], keep: (Value, Value) -> Value) {
        last = nil
        values.merge(other, uniquingKeysWith: keep)
    }
}
