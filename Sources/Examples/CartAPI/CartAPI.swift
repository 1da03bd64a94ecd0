// The cart's interface, shared by the cart service (which implements it) and its callers (which
// need only this module): a distributed actor protocol, resolved by key — one cart per user.
import Distributed

/// One line of a cart.
public struct CartLine: Codable, Sendable, Equatable {
    public var item: String
    public var quantity: Int

    public init(item: String, quantity: Int) {
        self.item = item
        self.quantity = quantity
    }
}

/// What a cart holds, and which process answered.
public struct CartContents: Codable, Sendable, Equatable {
    public var user: String
    public var lines: [CartLine]
    /// How many items, over every line.
    public var items: Int
    /// The pid of the process the cart's actor lives in.
    public var servedBy: Int

    public init(user: String, lines: [CartLine], servedBy: Int) {
        self.user = user
        self.lines = lines
        self.items = lines.reduce(0) { $0 + $1.quantity }
        self.servedBy = servedBy
    }
}

/// A refused change: what was wrong with it.
public struct CartRefused: Error, Codable, Sendable, Equatable, CustomStringConvertible {
    public var reason: String

    public init(reason: String) { self.reason = reason }

    public var description: String { reason }
}

/// A user's cart, one actor per user wherever the Context placed it.
///
/// ```swift
/// let cart = try $CartAPI.resolve(id: "cart/ana", using: actors)
/// let contents = try await cart.add(item: "tea", quantity: 2)
/// ```
@Resolvable
public protocol CartAPI: DistributedActor where ActorSystem: DistributedActorSystem<any Codable> {
    /// Adds `quantity` of `item` (1...1000); a bad quantity throws ``CartRefused``.
    distributed func add(item: String, quantity: Int) async throws -> CartContents
    /// Removes every `item`.
    distributed func remove(item: String) async throws -> CartContents
    /// What the cart holds.
    distributed func contents() async -> CartContents
}
