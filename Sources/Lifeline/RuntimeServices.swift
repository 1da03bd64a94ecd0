import LifelineProtocol
import Synchronization

/// The services a running process registered at run time, next to the one it started with
/// (mPaaS registerService / unregisterService). They share the process's connection and instance:
/// the broker routes their calls to this process, renews them with its heartbeats, and drops them
/// with it. They answer requests and have didCreate / start / willDestroy hooks; events, micro-apps
/// and boot tasks belong to the process's main service, which owns the bus subscription.
final class RuntimeServices: Sendable {
    private let table = Mutex<[String: Service]>([:])
    private let mainName: String
    private let template: ServiceRegistration

    /// `template` is the main service's registration: its instance, pid, host, heartbeat and token.
    init(mainName: String, template: ServiceRegistration) {
        self.mainName = mainName
        self.template = template
    }

    /// The runtime service registered under `name`, if any.
    func service(named name: String) -> Service? { table.withLock { $0[name] } }

    /// Every runtime service, by name.
    var all: [String: Service] { table.withLock { $0 } }

    private func registration(of service: Service) -> ServiceRegistration {
        var registration = template
        registration.name = service.name
        registration.events = []
        registration.methods = service.methods
        registration.priorities = [:]
        registration.deadlines = [:]
        registration.apps = []
        registration.lazy = service.isLazy
        registration.interceptorPriority = nil
        registration.bootTasks = []
        registration.keyedMethods = []
        registration.description = service.description
        return registration
    }

    /// Runs `service`'s didCreate hook and registers it with the broker under its name; when the
    /// broker refuses, its willDestroy hook runs and the refusal is thrown.
    func register(_ service: Service, client: LifelineClient, context: ServiceContext) async throws {
        try service.checkConfiguration()
        var unsupported: [String] = []
        if !service.events.isEmpty {
            unsupported.append("events (\(service.events.map(\.rawValue).joined(separator: ", ")))")
        }
        if !service.apps.isEmpty { unsupported.append("micro-apps") }
        if !service.bootTasks.isEmpty { unsupported.append("boot tasks") }
        if service.interceptor != nil { unsupported.append("a start interceptor") }
        if service.keyedActors != nil { unsupported.append("actors by key") }
        guard unsupported.isEmpty else {
            throw LifelineError(
                .badRequest,
                "'\(service.name)' is registered at run time, so it answers requests only; declare its "
                    + unsupported.joined(separator: ", ") + " on the process's main service '\(mainName)'")
        }
        guard service.name != mainName else {
            throw LifelineError(.conflict, "'\(service.name)' is this process's main service")
        }
        guard !table.withLock({ $0.keys.contains(service.name) }) else {
            throw LifelineError(.conflict, "'\(service.name)' is already registered by this process")
        }
        // didCreate before REGISTER: the broker may send START as soon as it has admitted the name.
        var service = service
        service.description = await service.describedWithActor()
        // As for a main service: its actor first, then didCreate, then REGISTER (the broker may
        // send START or a call as soon as it has admitted the name).
        try service.hostedActor?.start(context, as: service.name)
        for note in service.hostingNotes { context.log(note) }
        if let hook = service.didCreateHook {
            do { try await hook() } catch {
                service.hostedActor?.stop(context, as: service.name)
                throw error
            }
        }
        let claimed = table.withLock { [service] table in
            guard table[service.name] == nil else { return false }
            table[service.name] = service
            return true
        }
        guard claimed else {
            service.hostedActor?.stop(context, as: service.name)
            throw LifelineError(.conflict, "'\(service.name)' is already registered by this process")
        }
        do {
            try await send(registration(of: service), client: client)
        } catch {
            table.withLock { _ = $0.removeValue(forKey: service.name) }
            service.hostedActor?.stop(context, as: service.name)
            if let hook = service.willDestroyHook { try? await hook(context) }
            throw error
        }
    }

    /// Registers every runtime service again (after the broker restarted); returns what failed.
    func registerAgain(client: LifelineClient) async -> [(String, Error)] {
        var failures: [(String, Error)] = []
        for service in all.values.sorted(by: { $0.name < $1.name }) {
            do { try await send(registration(of: service), client: client) } catch {
                failures.append((service.name, error))
            }
        }
        return failures
    }

    private func send(_ registration: ServiceRegistration, client: LifelineClient) async throws {
        _ = try await client.request(.register(RegisterRequest(registration)))
    }

    /// Runs the willDestroy hook of the runtime service `name` and unregisters it.
    func unregister(_ name: String, client: LifelineClient, context: ServiceContext) async throws {
        guard name != mainName else {
            throw LifelineError(
                .badRequest, "'\(name)' is this process's main service; stop the process to unregister it")
        }
        guard let service = service(named: name) else {
            throw LifelineError(.notFound, "this process registered no service named '\(name)'")
        }
        if let hook = service.willDestroyHook {
            do { try await hook(context) } catch { context.log("willDestroy of \(name) failed: \(error)") }
        }
        table.withLock { _ = $0.removeValue(forKey: name) }
        service.hostedActor?.stop(context, as: name)
        _ = try await client.request(.unregister(UnregisterRequest(name: name, instance: template.instance)))
    }
}
