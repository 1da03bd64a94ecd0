import LifelineProtocol

/// A service's view of the runtime, handed to every handler: its name, and a client that shares the
/// service's connection to the broker.
public struct ServiceContext: Sendable {
    /// What the context holds, behind one reference: every event carries its service's context, and
    /// copying it then costs one reference count instead of four.
    private final class Storage: Sendable {
        let serviceName: String
        let client: LifelineClient
        let actorSystem: LifelineActorSystem
        let runtimeServices: RuntimeServices?

        init(serviceName: String, client: LifelineClient, runtimeServices: RuntimeServices?) {
            self.serviceName = serviceName
            self.client = client
            self.actorSystem = LifelineActorSystem(client: client)
            self.runtimeServices = runtimeServices
        }
    }

    private let storage: Storage

    /// The service's registered name.
    public var serviceName: String { storage.serviceName }
    /// Publish, look up and call other services through the broker.
    public var client: LifelineClient { storage.client }
    /// Distributed actors over the same connection: make a hosted actor with it
    /// (``Service/actor(_:)``), and resolve other services' actors with it.
    public var actorSystem: LifelineActorSystem { storage.actorSystem }
    var runtimeServices: RuntimeServices? { storage.runtimeServices }

    init(serviceName: String, client: LifelineClient, runtimeServices: RuntimeServices? = nil) {
        storage = Storage(serviceName: serviceName, client: client, runtimeServices: runtimeServices)
    }

    /// Writes a timestamped line to standard error under the service's name.
    public func log(_ message: String) { Console.log(serviceName, message) }

    /// Registers another service, answered by this process, under `service.name` (mPaaS
    /// registerService): its didCreate hook runs, then the broker admits it under the ownership rules
    /// of any registration (409 while another live process holds the name; its willDestroy hook then
    /// runs and the refusal is thrown); other processes find and call it by name until
    /// ``unregisterService(_:)`` or until this process leaves, and it is registered again when the
    /// broker restarts. It answers requests only: events, micro-apps and boot tasks belong to the
    /// process's main service.
    /// - Throws: ``LifelineError``: `.conflict` when another live process holds the name, `.forbidden` by policy, `.unavailable` without a broker, `.invalid` for a service put together wrongly (its problems named); or what its didCreate hook threw.
    public func registerService(_ service: Service) async throws {
        guard let runtimeServices else {
            throw LifelineError(.badRequest, "only a running service can register services")
        }
        try await runtimeServices.register(
            service, client: client,
            context: ServiceContext(
                serviceName: service.name, client: client, runtimeServices: runtimeServices))
        log("registered the service \(service.name) at run time")
    }

    /// Unregisters a service this process registered with ``registerService(_:)``, after its
    /// willDestroy hook (mPaaS unregisterService).
    /// - Throws: ``LifelineError`` (`.notFound`) for a name this process did not register, or the broker's refusal.
    public func unregisterService(_ name: String) async throws {
        guard let runtimeServices else {
            throw LifelineError(.badRequest, "only a running service can unregister services")
        }
        try await runtimeServices.unregister(
            name, client: client, context: ServiceContext(serviceName: name, client: client))
        log("unregistered the service \(name)")
    }
}
