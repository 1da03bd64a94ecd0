import LifelineProtocol

/// A value per event name, where the name updated last is found again without hashing: events come
/// in runs of one name (a batch, a stream), and a run's every event updates the same entry. The
/// remembered name is taken only when its bytes repeat (``EventName/isIdentical(to:)``); any other
/// goes through the dictionary, which the table keeps whole for readers.
struct NameTable<Value> {
    private(set) var values: [EventName: Value]
    /// The name updated last and its place in ``values`` (valid until a name is added or removed).
    private var last: (name: EventName, index: Dictionary<EventName, Value>.Index)?

    init(_ values: [EventName: Value] = [:]) { self.values = values }

    subscript(name: EventName) -> Value? { values[name] }

    /// Changes the value of `name` (`initial` when it has none) and returns the new value.
    @discardableResult
    mutating func update(_ name: EventName, initial: Value, _ change: (inout Value) -> Void) -> Value {
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
    mutating func merge(_ other: [EventName: Value], keep: (Value, Value) -> Value) {
        last = nil
        values.merge(other, uniquingKeysWith: keep)
    }
}
