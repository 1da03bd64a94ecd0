import Distributed
import LifelineProtocol

extension Service {
    /// Hosts the distributed actor `make` returns, under this service's name: other processes
    /// resolve the name to a reference and call it (``LifelineActorSystem``), and each distributed
    /// func is a method of the service — named by its base name, its arguments a JSON object keyed by
    /// their labels — so `lifeline describe` lists them with shapes taken from their types and
    /// `lifeline call` invokes them. The actor is made when the service registers (make it with
    /// `context.actorSystem`) and dropped when the service leaves.
    ///
    /// ```swift
    /// await Service("gateway")
    ///     .actor { context in Gateway(actorSystem: context.actorSystem) }
    ///     .main()
    /// ```
    ///
    /// A service hosts one actor, of an internal or public, non-generic type. Its generic distributed
    /// funcs are not served (the log says so when the service starts); a `distributed var` is served
    /// as a method without arguments. Two funcs with the same base name, one named like a `.method`
    /// of the service, or an actor type whose funcs cannot be found stop the service from starting
    /// with an error naming them.
    public func actor<A: DistributedActor>(_ make: @escaping @Sendable (ServiceContext) -> A) -> Service
    where A.ActorSystem == LifelineActorSystem {
        let hosted = HostedActor(make: make)
        var copy = self
        guard hostedActor == nil && keyedActors == nil else {
            copy.configurationProblems.append(
                "'\(name)' already hosts an actor or actors by key; a service hosts one of them (host \(A.self) in a service of its own)"
            )
            return copy
        }
        copy.hostedActor = hosted
        if let problem = DistributedFunctionTable.unreadable {
            copy.configurationProblems.append("cannot list the distributed funcs of \(A.self): \(problem)")
        }
        copy.noteListing(hosted.listing, of: A.self)
        return copy.serving(hosted.listing, of: A.self) { entry, call in try await hosted.answer(entry, call)
        }
    }

    /// This service with a method for each distributed func of `listing` (funcs of `type`), each
    /// answered by `answer`; clashing names are noted as configuration problems.
    func serving<A>(
        _ listing: DistributedFunctionTable.Listing, of type: A.Type,
        answer: @escaping @Sendable (DistributedFunctionTable.Entry, CallRequest) async throws -> [UInt8]
    ) -> Service {
        var copy = self
        var signatures: [String: String] = [:]
        for entry in listing.entries {
            let function = entry.function
            if let other = signatures[function.method] {
                copy.configurationProblems.append(
                    "\(A.self).\(other) and \(function.signature) would both be the method '\(function.method)'; Lifeline names methods by base name: rename one"
                )
                continue
            }
            if methodHandlers[function.method] != nil {
                copy.configurationProblems.append(
                    "\(A.self).\(function.signature) and the service's method '\(function.method)' share a name; rename one"
                )
                continue
            }
            signatures[function.method] = function.signature
            copy = copy.textMethod(function.method) { call in try await answer(entry, call) }
                .describing(
                    function.method, summary: "distributed func \(function.signature)", arguments: "",
                    reply: "")
            copy.actorMethods[function.method] = "\(A.self).\(function.signature)"
        }
        return copy
    }

    /// Notes what of `listing` is not served, and a type with no func to serve.
    mutating func noteListing<A>(_ listing: DistributedFunctionTable.Listing, of type: A.Type) {
        hostingNotes = listing.skipped.map { "\(A.self).\($0) is not served" }
        if listing.entries.isEmpty && listing.skipped.isEmpty {
            configurationProblems.append(
                "found no distributed funcs of \(A.self) to serve; a private, fileprivate or generic actor type cannot be hosted (make it internal or public, not generic)"
            )
        }
    }

    /// The description REGISTER carries, with the hosted actors' methods described from their types.
    func describedWithActor() async -> ServiceDescription {
        var description = self.description
        var methods: [String: ServiceDescription.Method] = [:]
        if let hostedActor { methods = await hostedActor.describeMethods() }
        if let keyedActors { methods = await keyedActors.describeMethods() }
        for (method, shape) in methods { description.methods[method] = shape }
        return description
    }
}
