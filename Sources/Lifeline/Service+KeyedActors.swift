import Distributed
import LifelineProtocol

extension Service {
    /// Hosts distributed actors by key: `make` builds the actor of a key on the first call to it
    /// (`cart/ana`), with `context.actorSystem`, and the broker sends every later call to that key to
    /// the same actor — one actor per key among all instances of the service, which serialises the
    /// calls to its key while calls to other keys run in parallel.
    ///
    /// ```swift
    /// await Service("cart")
    ///     .actors(idleAfter: .seconds(300), deactivate: { (cart: Cart) in
    ///         try await cart.whenLocal { cart in try cart.save() }
    ///     }) { key, context in
    ///         try Cart(user: key, actorSystem: context.actorSystem)
    ///     }
    ///     .main()
    /// ```
    ///
    /// A caller resolves one by its address, `try $CartAPI.resolve(id: "cart/ana", using: actors)`, or
    /// `lifeline call cart/ana add '{…}'`. An actor unused for `idleAfter` is deactivated: `deactivate`
    /// runs first (to save what it holds; keep it brief, well within half a heartbeat interval), and the next
    /// call activates the key again, maybe on another instance. When `make` throws, that caller gets
    /// the error and the next call tries again. Each distributed func is a method of the service, as
    /// with ``actor(_:)``; a service hosts one actor or actors by key, not both. Such a service is
    /// ``replicable(_:)``: run as many instances as you like, the keys spread over them.
    public func actors<A: DistributedActor>(
        idleAfter: Duration = .seconds(300), deactivate: (@Sendable (A) async throws -> Void)? = nil,
        _ make: @escaping @Sendable (_ key: String, _ context: ServiceContext) async throws -> A
    ) -> Service where A.ActorSystem == LifelineActorSystem {
        var copy = self
        guard hostedActor == nil && keyedActors == nil else {
            copy.configurationProblems.append(
                "'\(name)' already hosts an actor or actors by key; a service hosts one of them (host \(A.self) in a service of its own)"
            )
            return copy
        }
        guard idleAfter > .zero else {
            copy.configurationProblems.append("actors(idleAfter:) of '\(name)' must be longer than zero")
            return copy
        }
        let host = KeyedActorHost(idleAfter: idleAfter, deactivate: deactivate, make: make)
        copy.keyedActors = host
        copy = copy.replicable()
        if let problem = DistributedFunctionTable.unreadable {
            copy.configurationProblems.append("cannot list the distributed funcs of \(A.self): \(problem)")
        }
        copy.noteListing(host.listing, of: A.self)
        return copy.serving(host.listing, of: A.self) { entry, call in try await host.answer(entry, call) }
    }

    /// The methods served by actors by key (REGISTER `keyed`).
    var keyedMethods: [String] { keyedActors == nil ? [] : actorMethods.keys.sorted() }
}
