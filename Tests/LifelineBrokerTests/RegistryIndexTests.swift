import LifelineProtocol
import TestSupport
import Testing

@testable import LifelineBroker

/// The registry keeps three indexes beside its entries so that the broker's loop does not walk them:
/// subscribers per event, names per peer, expiry times per instance. Each must say what a walk over
/// the entries says, after any sequence of joins, renewals, removals, heartbeats, expiries and cuts.
@Suite("The registry's indexes against its entries", .timeLimit(.minutes(1)))
struct RegistryIndexTests {
    static let names = ["pay", "cart", "push"]
    static let events: [EventName] = ["app.a", "app.b", "app.c", "didBecomeActive"]
    static let peers: [[UInt8]] = [[1], [2], [3], [4]]

    static func registration(_ generator: inout SeededGenerator) -> ServiceRegistration {
        let chosen = events.filter { _ in Bool.random(using: &generator) }
        var registration = ServiceRegistration(
            name: names.randomElement(using: &generator)!,
            instance: ["i1", "i2", "i3"].randomElement(using: &generator)!, pid: 1, host: "h",
            events: chosen, methods: ["m"],
            heartbeat: HeartbeatSettings(
                intervalMilliseconds: [100, 1000].randomElement(using: &generator)!, liveness: 3),
            attachToken: "t")
        registration.replicable = true
        return registration
    }

    @Test("property, seeded: subscriber counts, names per peer and the next expiry are what the entries say")
    func indexesAgainstEntries() {
        var generator = SeededGenerator()
        for round in 0..<40 {
            var registry = ServiceRegistry()
            var now: UInt64 = 0
            for step in 0..<150 {
                now += UInt64.random(in: 0...400_000_000, using: &generator)
                let peer = Self.peers.randomElement(using: &generator)!
                let name = Self.names.randomElement(using: &generator)!
                switch Int.random(in: 0..<10, using: &generator) {
                case 0..<4: _ = registry.admit(Self.registration(&generator), peer: peer, now: now)
                case 4: _ = registry.remove(name)
                case 5: _ = registry.removeInstance(of: name, on: peer)
                case 6: _ = registry.touch(peer: peer, now: now)
                case 7: _ = registry.removeExpired(now: now)
                case 8: _ = registry.disconnect(peer: peer)
                default: _ = registry.instanceForCall(of: name)
                }
                let context = "round \(round), step \(step); \(generator.replay)"
                let entries = Array(registry.entries.values)
                for event in Self.events {
                    let walked = entries.filter { $0.registration.events.contains(event) }.count
                    #expect(registry.subscriberCount(of: event) == walked, "\(event), \(context)")
                }
                for peer in Self.peers {
                    let served = entries.filter { $0.instances.contains { $0.peer == peer } }
                    #expect(registry.nameCount(of: peer) == served.count, "\(peer), \(context)")
                    for name in Self.names {
                        let holds = registry.entries[name]?.instances.contains { $0.peer == peer } ?? false
                        #expect(registry.holds(name, peer: peer) == holds, "\(name) on \(peer), \(context)")
                    }
                }
                let earliest = entries.flatMap(\.instances).map(\.expiryTime).min()
                #expect(registry.nextExpiry == earliest, "\(context)")
                if registry.nextExpiry != earliest { return }
            }
        }
    }

    @Test("an instance coming back on a connection that serves another instance of its name is refused")
    func oneInstancePerConnection() {
        var registration = ServiceRegistration(
            name: "pay", instance: "i1", pid: 1, host: "h", events: ["app.a"], methods: ["m"],
            attachToken: "t")
        registration.replicable = true
        var registry = ServiceRegistry()
        #expect(registry.admit(registration, peer: [4], now: 0) == .added)
        registration.instance = "i2"
        #expect(registry.admit(registration, peer: [2], now: 1) == .joined(instances: 2))
        let refusal = ServiceRegistry.Admission.differs(
            "this connection already serves an instance of 'pay'; another instance needs its own process")
        #expect(registry.admit(registration, peer: [4], now: 2) == refusal, "i2 moving onto i1's connection")
        #expect(registry.entry(named: "pay")?.instances.map(\.peer) == [[4], [2]])
        #expect(registry.admit(registration, peer: [5], now: 3) == .renewed, "onto a connection of its own")
        #expect(registry.removeInstance(of: "pay", on: [4]) != nil)
        #expect(!registry.holds("pay", peer: [4]) && registry.holds("pay", peer: [5]))
    }
}
