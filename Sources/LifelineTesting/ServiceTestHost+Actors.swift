import Lifeline

extension ServiceTestHost {
    /// An actor system whose remote calls reach the service under test (or a service it registered
    /// at run time): resolve the actor it hosts by name and call it as another process would, through
    /// the same methods, argument keys and error coding.
    ///
    /// ```swift
    /// let host = try await ServiceTestHost(GatewayService.make())
    /// let gateway = try $SignInGateway.resolve(id: "gateway", using: host.actorSystem)
    /// #expect(try await gateway.state() == SignInState(signedIn: false))
    /// ```
    public var actorSystem: LifelineActorSystem {
        LifelineActorSystem(timeout: .seconds(5)) { [self] service, method, body, timeout in
            try await call(method, body, service: service == name ? nil : service, timeout: timeout)
        }
    }
}
