import Distributed
import LifelineProtocol
import LifelineSupport
import Synchronization

/// The actors by key a service hosts, seen without their type (``Service/actors(idleAfter:deactivate:_:)``).
protocol KeyedActorHosting: Sendable {
    /// Begins hosting under the service name `name` for the connection of `context`: idle keys are
    /// deactivated from now on, and every key when the broker falls silent for too long.
    func start(
        _ context: ServiceContext, as name: String, contact: BrokerContact, heartbeat: HeartbeatSettings)
    /// The keys active for the connection of `context` (REGISTER `holding`).
    func heldKeys(_ context: ServiceContext, as name: String) -> [String]
    /// Refuses every further activation and deactivates every key (their hooks run): the instance
    /// leaves, and the broker may place its keys elsewhere once it has unregistered.
    func leave(_ context: ServiceContext, as name: String) async
    /// Each method's argument and reply shapes, taken from the funcs' types.
    func describeMethods() async -> [String: ServiceDescription.Method]
}

/// The actors of type `A` a service hosts by key: each made on the first call to its key (by the
/// service's factory, with the ID `service/key`), kept while calls come, deactivated when idle (its
/// hook runs first, then the broker forgets where it was), and all deactivated when the broker has
/// been silent for too long — before the broker can place the keys on another instance.
final class KeyedActorHost<A: DistributedActor>: KeyedActorHosting
where A.ActorSystem == LifelineActorSystem {
    let listing: DistributedFunctionTable.Listing
    private let make: @Sendable (String, ServiceContext) async throws -> A
    private let deactivate: (@Sendable (A) async throws -> Void)?
    private let idleAfter: Duration
    private let live = Mutex<[HostingKey: Hosting]>([:])

    private struct Hosting {
        let activations: KeyedActivations<A>
        let sweeper: Task<Void, Never>
    }

    init(
        idleAfter: Duration, deactivate: (@Sendable (A) async throws -> Void)?,
        make: @escaping @Sendable (String, ServiceContext) async throws -> A
    ) {
        self.idleAfter = idleAfter
        self.deactivate = deactivate
        self.make = make
        listing = DistributedFunctionTable.listing(of: A.self)
    }

    /// How long after the newest request the broker answered an instance drops every key: half a
    /// heartbeat interval short of the window after which the broker would move them (it counts from
    /// the instance's last message, never older than that request), and as short against the window
    /// of the broker registered with (a restarted broker places no key anew within its first window).
    static func fenceAfter(_ heartbeat: HeartbeatSettings, broker: (window: UInt64, interval: UInt64)? = nil)
        -> Duration
    {
        let interval = Duration.milliseconds(heartbeat.intervalMilliseconds)
        var fence = max(interval / 2, interval * heartbeat.liveness - interval * 1.5)
        if let broker {
            let brokerInterval = Duration.nanoseconds(Int64(broker.interval))
            let brokerFence = max(
                brokerInterval / 2, Duration.nanoseconds(Int64(broker.window)) - brokerInterval * 1.5)
            fence = min(fence, brokerFence)
        }
        return fence
    }

    func start(
        _ context: ServiceContext, as name: String, contact: BrokerContact, heartbeat: HeartbeatSettings
    ) {
        let activations = KeyedActivations<A>()
        let tick = min(Duration.milliseconds(heartbeat.intervalMilliseconds) / 10, idleAfter / 4)
        let sweeper = Task { [weak self] in
            var fenced = false
            var asked = ContinuousClock.now - .seconds(3600)
            while !Task.isCancelled {
                try? await Task.sleep(for: max(tick, .milliseconds(5)))
                guard let self else { return }
                let fence = Self.fenceAfter(heartbeat, broker: contact.broker)
                if ContinuousClock.now - asked >= fence / 4 {
                    // Heartbeats are one-way: an answered HELLO proves the broker heard this instance.
                    asked = .now
                    Task { _ = try? await context.client.hello() }
                }
                let silence = contact.silence().map { Duration.nanoseconds(Int64($0)) } ?? .zero
                if silence >= fence {
                    if !fenced && !activations.keys.isEmpty {
                        context.log(
                            "the broker has answered nothing sent in the last \(silence.wholeMilliseconds) ms: deactivating \(activations.keys.count) actor(s) by key before it may place them elsewhere"
                        )
                    }
                    fenced = true
                    activations.suspend(
                        "'\(name)' has had no answer from the broker for \(silence.wholeMilliseconds) ms: it activates no actor by key until it does (retry)"
                    )
                    // Every key at once, even one a call runs on: none may outlive the fence.
                    await self.deactivateAll(in: activations, service: name, context: context)
                    continue
                }
                if fenced {
                    fenced = false
                    activations.suspend(nil)
                }
                for key in activations.idle(since: .now - self.idleAfter) {
                    // Not awaited: the fence is checked on every turn, whatever a hook or RELEASE takes.
                    Task {
                        await self.deactivate(
                            key, in: activations, service: name, context: context, release: true)
                    }
                }
            }
        }
        let replaced = live.withLock {
            $0.updateValue(
                Hosting(activations: activations, sweeper: sweeper), forKey: HostingKey(context, name))
        }
        replaced?.sweeper.cancel()
    }

    func heldKeys(_ context: ServiceContext, as name: String) -> [String] {
        live.withLock { $0[HostingKey(context, name)]?.activations.keys } ?? []
    }

    func leave(_ context: ServiceContext, as name: String) async {
        guard let hosting = live.withLock({ $0.removeValue(forKey: HostingKey(context, name)) }) else {
            return
        }
        hosting.sweeper.cancel()
        hosting.activations.close("'\(name)' is leaving: its actors by key are deactivated")
        await deactivateAll(in: hosting.activations, service: name, context: context)
    }

    /// Deactivates every active key, even those calls run on, their hooks side by side, without
    /// RELEASE: calls to them wait until every hook has run.
    private func deactivateAll(in activations: KeyedActivations<A>, service: String, context: ServiceContext)
        async
    {
        let actors = activations.keys.compactMap { key in
            activations.beginDeactivation(of: key, force: true).map { (key, $0) }
        }
        await withTaskGroup(of: Void.self) { group in
            for (key, actor) in actors {
                group.addTask { await self.runHook(actor, key: key, service: service, context: context) }
            }
        }
        for (key, _) in actors { activations.endDeactivation(of: key) }
    }

    /// Runs the func `entry` names on the actor of the call's key, activating it first when needed.
    /// - Throws: ``ServiceError``: 400 without a key, 503 when the service is not hosting now, what
    ///   the activation threw (the key is released: the next call tries again), and what the func threw.
    func answer(_ entry: DistributedFunctionTable.Entry, _ call: CallRequest) async throws -> [UInt8] {
        let name = call.context.serviceName
        guard let key = call.key else {
            throw ServiceError(
                .badRequest,
                "'\(call.method)' of '\(name)' is a method of its actors by key: call '\(name)/KEY'")
        }
        guard let activations = live.withLock({ $0[HostingKey(call.context, name)]?.activations }) else {
            throw ServiceError(.unavailable, "'\(name)' is not hosting its actors by key now")
        }
        let actor: A
        do {
            actor = try await activations.acquire(key) {
                do { return try await self.activate(key, service: name, context: call.context) } catch {
                    throw ActivationFailure(error: error)
                }
            }
        } catch let failure as ActivationFailure {
            Self.releaseAfterFailure(key, of: name, in: activations, client: call.context.client)
            switch failure.error {
            case let error as ServiceError: throw error
            case let error as LifelineError: throw error
            default: throw ServiceError(.internalError, "activating \(name)/\(key) failed: \(failure.error)")
            }
        }
        defer { activations.finish(key) }
        return try await HostedActor<A>.invoke(entry, on: actor, text: call.text)
    }

    /// What the factory (or the check of what it made) threw.
    private struct ActivationFailure: Error {
        let error: any Error
    }

    /// Tells the broker that `key` is not active here, so that nothing stays placed on this instance
    /// for a key it could not activate. Sent after the failed call's answer (the broker keeps a key
    /// with a call on its way), tried again a few times, and given up when the key became active here
    /// meanwhile (another call activated it: it stays placed here).
    private static func releaseAfterFailure(
        _ key: String, of service: String, in activations: KeyedActivations<A>, client: LifelineClient
    ) {
        Task {
            for attempt in 0..<5 {
                try? await Task.sleep(for: .milliseconds(attempt == 0 ? 20 : 200))
                if activations.holds(key) { return }
                guard let released = try? await client.release(service: service, key: key), !released else {
                    return
                }
            }
        }
    }

    private func activate(_ key: String, service: String, context: ServiceContext) async throws -> A {
        let id = LifelineActorSystem.ActorID(service: service, key: key)
        let claim = HostingClaim(id.description)
        let actor = try await LifelineActorSystem.$hostingClaim.withValue(claim) {
            try await make(key, context)
        }
        guard actor.id == id else {
            throw ServiceError(
                .internalError,
                "the factory of '\(service)' must make its \(A.self) there, with a LifelineActorSystem (context.actorSystem); it returned one named '\(actor.id)'"
            )
        }
        return actor
    }

    /// Deactivates `key` (its hook runs, then — `release` — the broker forgets its placement) unless
    /// a call runs on it (`force`: even then; the hook waits for the actor like any call).
    private func deactivate(
        _ key: String, in activations: KeyedActivations<A>, service: String, context: ServiceContext,
        release: Bool, force: Bool = false
    ) async {
        guard let actor = activations.beginDeactivation(of: key, force: force) else { return }
        await runHook(actor, key: key, service: service, context: context)
        var refusing: String?
        if release {
            do {
                if try await context.client.release(service: service, key: key) {
                    // Forgotten: a call that waited meanwhile is one the broker gave up on (it
                    // forgets no key with a call on its way), and the key may be placed elsewhere.
                    refusing = "\(service)/\(key) was deactivated here before this call could run (retry)"
                }
            } catch {
                context.log("could not tell the broker that \(service)/\(key) was deactivated: \(error)")
            }
        }
        activations.endDeactivation(of: key, refusing: refusing)
    }

    private func runHook(_ actor: A, key: String, service: String, context: ServiceContext) async {
        guard let deactivate else { return }
        do { try await deactivate(actor) } catch {
            context.log("deactivating \(service)/\(key): its hook failed: \(error)")
        }
    }

    func describeMethods() async -> [String: ServiceDescription.Method] {
        await HostedActor<A>.describe(listing)
    }
}
