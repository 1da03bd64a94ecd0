import Distributed
import Lifeline

/// The benchmark's payload as a type, `{"k": K, "q": 1?, "p": "xxx…"}`, for the typed rows: one type
/// per fan-out, since a typed event names itself.
protocol BenchEvent: LifelineEvent {
    var k: UInt64 { get }
    var q: Int? { get }
}

struct TypedN1: BenchEvent {
    static let name: EventName = "typed.n1"
    var k: UInt64
    var q: Int?
    var p: String
}

struct TypedN4: BenchEvent {
    static let name: EventName = "typed.n4"
    var k: UInt64
    var q: Int?
    var p: String
}

struct TypedN16: BenchEvent {
    static let name: EventName = "typed.n16"
    var k: UInt64
    var q: Int?
    var p: String
}

/// The body of `echo-typed`: what the call sends, decoded, and answered again.
struct EchoBody: Codable, Sendable {
    var k: UInt64
    var p: String
}

/// The benchmark's echo as a distributed actor: the `lifeline actor` call row calls its func by name
/// (`echoActor`, body `{"k": K, "p": "xxx…"}`), as a `LifelineActorSystem` caller does.
distributed actor EchoActor {
    typealias ActorSystem = LifelineActorSystem

    distributed func echoActor(k: UInt64, p: String) -> EchoBody { EchoBody(k: k, p: p) }
}

extension Service {
    /// Handles the typed events of `topics` (`typed.n1`, …) with `handle(key, quiet, event)`.
    func typed(_ topics: [EventName], _ handle: @escaping @Sendable (UInt64, Bool, Event) -> Void) -> Service
    {
        var service = self
        func add<E: BenchEvent>(_ type: E.Type) {
            guard topics.contains(E.name) else { return }
            service = service.on(type) { value, event in handle(value.k, value.q != nil, event) }
        }
        add(TypedN1.self)
        add(TypedN4.self)
        add(TypedN16.self)
        return service
    }
}
