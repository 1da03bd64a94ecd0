import CartAPI
import Foundation
import Lifeline
import LifelineTesting
import Testing

@testable import lifeline_cart

@Suite("lifeline-cart's actors by key against LifelineTesting's in-memory broker", .timeLimit(.minutes(1)))
struct CartServiceTests {
    /// A store in a directory of its own, with a journal of activations.
    static func store() -> CartStore {
        let directory = NSTemporaryDirectory() + "cart-tests-\(UUID().uuidString)"
        return CartStore(environment: [
            "LIFELINE_CART_STORE": directory, "LIFELINE_CART_JOURNAL": directory + ".journal",
        ])
    }

    /// The journal's lines as (what, user), in order.
    static func journal(_ store: CartStore) -> [String] {
        let text = (try? String(contentsOfFile: store.journal!, encoding: .utf8)) ?? ""
        return text.split(separator: "\n").map { $0.split(separator: " ").prefix(2).joined(separator: " ") }
    }

    @Test("one actor per key: calls to a key meet the same state, other keys their own")
    func perKey() async throws {
        let store = Self.store()
        let host = try await ServiceTestHost(CartService.make(store: store))
        host.actorSystem.registerErrors(CartRefused.self)
        let ana = try $CartAPI.resolve(id: "cart/ana", using: host.actorSystem)
        let bob = try $CartAPI.resolve(id: .init(service: "cart", key: "bob"), using: host.actorSystem)
        _ = try await ana.add(item: "tea", quantity: 2)
        _ = try await bob.add(item: "jam", quantity: 1)
        let contents = try await ana.add(item: "tea", quantity: 1)
        #expect(contents.user == "ana" && contents.lines == [CartLine(item: "tea", quantity: 3)])
        #expect(try await bob.contents().items == 1)
        await #expect(throws: CartRefused(reason: "quantity must be within 1...1000, got 0")) {
            try await ana.add(item: "tea", quantity: 0)
        }
        #expect(Self.journal(store).sorted() == ["start ana", "start bob"], "each key activated once")
        try await host.stop()
        #expect(
            Self.journal(store).suffix(2).sorted() == ["stop ana", "stop bob"], "leaving deactivates each")
    }

    @Test("calls to one key are serialised by its actor; calls to different keys run side by side")
    func serialised() async throws {
        let host = try await ServiceTestHost(CartService.make(store: Self.store()))
        try await withThrowingTaskGroup(of: Void.self) { group in
            for index in 0..<40 {
                group.addTask {
                    _ = try await host.call(
                        "add", ["item": "tea", "quantity": 1], key: index % 2 == 0 ? "ana" : "bob")
                }
            }
            try await group.waitForAll()
        }
        #expect(try await host.call("contents", key: "ana")["items"] == 20)
        #expect(try await host.call("contents", key: "bob")["items"] == 20)
        try await host.stop()
    }

    @Test("an idle actor is deactivated (its hook saves it) and its next call activates it again")
    func idle() async throws {
        let store = Self.store()
        let host = try await ServiceTestHost(CartService.make(idleAfter: .milliseconds(50), store: store))
        _ = try await host.call("add", ["item": "tea", "quantity": 2], key: "ana")
        let deadline = ContinuousClock.now + .seconds(20)
        while !Self.journal(store).contains("stop ana") && ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(20))
        }
        #expect(Self.journal(store) == ["start ana", "stop ana"])
        #expect(
            try await host.call("contents", key: "ana")["items"] == 2, "its state came back from the store")
        #expect(Self.journal(store).prefix(3) == ["start ana", "stop ana", "start ana"])
        try await host.stop()
    }

    @Test("an activation that throws fails its call with the reason; the next call tries again")
    func failedActivation() async throws {
        let store = Self.store()
        try FileManager.default.createDirectory(at: store.directory, withIntermediateDirectories: true)
        let file = store.directory.appendingPathComponent("eve.json")
        try Data("not a cart".utf8).write(to: file)
        let host = try await ServiceTestHost(CartService.make(store: store))
        do {
            _ = try await host.call("contents", key: "eve")
            Issue.record("a cart that cannot be read was activated")
        } catch let error as LifelineError {
            #expect(error.status == 500)
            #expect(error.message.hasPrefix("activating cart/eve failed: "), "\(error.message)")
        }
        #expect(Self.journal(store).isEmpty, "nothing was activated")
        try Data("[]".utf8).write(to: file)
        #expect(try await host.call("contents", key: "eve")["items"] == 0)
        #expect(Self.journal(store) == ["start eve"])
        try await host.stop()
    }

    @Test("a keyed method called without a key says how to call it")
    func missingKey() async throws {
        let host = try await ServiceTestHost(CartService.make(store: Self.store()))
        do {
            _ = try await host.call("contents")
            Issue.record("a keyless call was answered")
        } catch let error as LifelineError {
            #expect(error.status == .badRequest)
            #expect(error.message.contains("call 'cart/KEY'"), "\(error.message)")
        }
        try await host.stop()
    }
}
