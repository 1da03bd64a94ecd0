import LifelineProtocol

/// A lifecycle event as a Swift type: its payload is the type's JSON form, its name on the bus is
/// ``name``. Handle it with ``Service/on(_:priority:deadline:perform:)-(E.Type,_,_,_)``, answer it
/// when dispatched with ``Service/handle(_:priority:deadline:answer:)-(E.Type,_,_,_)``, and publish
/// it with ``LifelineClient/publish(_:acknowledged:force:timeout:)-(LifelineEvent,_,_,_)``:
///
/// ```swift
/// struct CartDidChange: LifelineEvent {
///     static let name: EventName = "com.example.cart.didChange"
///     var items: Int
///     var coupon: String?
/// }
///
/// Service("cart").on(CartDidChange.self) { change, event in
///     print(change.items, event.sequence)
/// }
/// ```
///
/// The built-in events have their types in ``Lifecycle`` (`Lifecycle.OpenURL`, …). A payload that
/// does not decode never reaches the handler: the service logs it with the coding path, counts it
/// (`lifeline stats`, UNDECODABLE) and answers an acknowledged or dispatched event with that error.
public protocol LifelineEvent: Codable, Sendable {
    /// The event's name on the bus: a built-in one, or a custom one with a namespace.
    static var name: EventName { get }
}

extension Event {
    /// The payload decoded as `type`.
    /// - Throws: ``PayloadDecodingError`` naming the coding path and what was wrong there.
    public func decode<T: Decodable>(_ type: T.Type) throws(PayloadDecodingError) -> T {
        try storage.decode(type)
    }
}

extension LifelineEvent {
    /// The payload's JSON text, written straight from the value.
    /// - Throws: `EncodingError` for a number JSON cannot hold (NaN, infinity).
    func text() throws -> [UInt8] { try JSONBytesEncoder.encode(self) }
}
