import CartAPI
import Distributed
import Foundation
import Lifeline

/// A user's cart as a distributed actor by key (the key is the user): its lines are saved in the
/// store after every change, so an activation on another instance (after this one was deactivated
/// or died) goes on from the last completed call.
distributed actor Cart: CartAPI {
    typealias ActorSystem = LifelineActorSystem

    let user: String
    private let store: CartStore
    private var lines: [CartLine]

    init(user: String, store: CartStore, actorSystem: LifelineActorSystem) throws {
        self.user = user
        self.store = store
        self.lines = try store.load(user)
        self.actorSystem = actorSystem
    }

    distributed func add(item: String, quantity: Int) async throws -> CartContents {
        guard (1...1000).contains(quantity) else {
            throw CartRefused(reason: "quantity must be within 1...1000, got \(quantity)")
        }
        if let index = lines.firstIndex(where: { $0.item == item }) {
            lines[index].quantity += quantity
        } else {
            lines.append(CartLine(item: item, quantity: quantity))
        }
        try store.save(lines, for: user)
        return contents()
    }

    distributed func remove(item: String) async throws -> CartContents {
        lines.removeAll { $0.item == item }
        try store.save(lines, for: user)
        return contents()
    }

    distributed func contents() -> CartContents {
        CartContents(user: user, lines: lines, servedBy: Int(ProcessInfo.processInfo.processIdentifier))
    }

    /// Saves what the cart holds (its deactivation hook; every change is saved already).
    func save() throws { try store.save(lines, for: user) }
}

/// A refused change answers 422 (`lifeline call cart/ana add …` shows it); a Swift caller still
/// catches it as ``CartRefused``.
extension CartRefused: StatusReportingError {
    public var status: Status { Status(rawValue: 422) }
}
