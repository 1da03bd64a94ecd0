import Lifeline

extension ServiceTestHost {
    /// An actor system whose remote calls reach the service under test (or a service it registered
    /// at run time): resolve the actor it hosts by name (or one of its actors by key, `cart/ana`) and
    /// call it as another process would, through the same methods, argument keys and error coding. It is one system for the host's life, so an
    /// error type registered with it (``LifelineActorSystem/registerErrors(_:)``) stays registered.
    ///
    /// ```swift
    /// let host = try await ServiceTestHost(GatewayService.make())
    /// let gateway = try $SignInGateway.resolve(id: "gateway", using: host.actorSystem)
    /// #expect(try await gateway.state() == SignInState(signedIn: false))
    /// ```
    public var actorSystem: LifelineActorSystem {
        actors.withLock { actors in
            if let actors { return actors }
            let name = name
            let made = LifelineActorSystem(timeout: .seconds(5)) {
                [weak self] address, method, body, timeout in
                guard let self else { throw LifelineError(.unavailable, "the test host is gone") }
                let id = LifelineActorSystem.ActorID(stringLiteral: address)
                let reply = await call(
                    method, text: body, service: id.service == name ? nil : id.service, key: id.key,
                    timeout: timeout)
                guard reply.status.isSuccess else { throw LifelineError(reply: reply) }
                return reply.body
            }
            actors = made
            return made
        }
    }
}
