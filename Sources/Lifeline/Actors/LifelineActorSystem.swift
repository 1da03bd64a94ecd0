import Distributed
import LifelineProtocol
import Synchronization

/// Distributed actors over the broker: a service hosts an actor under its name
/// (``Service/actor(_:)``), and any process resolves that name to a reference it calls like a local
/// object — through a `@Resolvable` protocol, so the caller needs only the protocol's module.
///
/// ```swift
/// let actors = LifelineActorSystem(client: client)
/// let gateway = try $SignInGateway.resolve(id: "gateway", using: actors)
/// let state = try await gateway.signIn(user: "ada", password: "secret")
/// ```
///
/// Every remote call is a broker CALL: the method is the func's base name, the body its arguments
/// as a JSON object keyed by their labels, the reply its value's JSON form — so the broker's
/// deadlines, lazy starts, `call` grants, per-method STATS and `tail --all` traces apply, and
/// `lifeline call gateway signIn '{"user": "ada", "password": "secret"}'` calls the same func. A call
/// fails with ``LifelineError``: `.notFound` at once for a name nobody serves, `.unavailable` when the
/// host goes away during the call, `.timeout` past its deadline; an error the actor threw that is
/// `Codable` is rethrown as its own type, any other arrives as `.failed(500)` with its message.
///
/// A reference resolved through the system that hosts the actor, in the hosting process, is the
/// actor itself: its calls are local (no broker, no deadline). A `distributed var` is served as a
/// func without arguments. Not supported (refused with a clear error, never a crash): generic
/// distributed funcs, generic, private or fileprivate actor types, two funcs of one actor with the
/// same base name, and actors passed as arguments or results.
public final class LifelineActorSystem: DistributedActorSystem, Sendable {
    public typealias SerializationRequirement = any Codable

    /// Sends a CALL (to `service`, or `service/key`) with a body of JSON text and returns its
    /// answer's text: a client's.
    package typealias Transport =
        @Sendable (_ service: String, _ method: String, _ body: [UInt8], _ timeout: Duration) async throws
        -> [UInt8]

    /// The deadline of a remote call that does not set its own with ``withTimeout(_:isolation:_:)``.
    public let defaultTimeout: Duration
    private let transport: Transport?
    /// The actors of this system that live in this process, for ``resolve(id:as:)``.
    private let local = Mutex<[LifelineActorSystem.ActorID: LocalActor]>([:])

    private struct LocalActor: @unchecked Sendable {
        // Distributed actors are Sendable; the reference is weak so the table does not keep them.
        weak var actor: (any DistributedActor)?
    }

    /// The error types a remote actor's error is rebuilt as, by their mangled names.
    private let knownErrors = Mutex<[String: any (Error & Decodable).Type]>([:])

    /// Remote calls go through `client`'s connection, each with `timeout` unless it sets its own.
    /// A remote actor's error of one of `errors` is rethrown as itself; any other arrives as a
    /// ``LifelineError`` with its message (``registerErrors(_:)``).
    public convenience init(
        client: LifelineClient, timeout: Duration = .seconds(5), errors: [any (Error & Decodable).Type] = []
    ) {
        self.init(
            timeout: timeout,
            textTransport: { service, method, body, timeout in
                try await client.call(service, method, text: body, timeout: timeout).body
            })
        registerErrors(errors)
    }

    /// Lets a remote actor's errors of `types` be rethrown here as themselves. A remote side names
    /// the type of its error; only types a program registered here are ever made from that name —
    /// any other arrives as a ``LifelineError`` with the remote error's message, status and body.
    /// (Swift hands the system `any Error` even for a func declared with typed `throws`, so such a
    /// func's error type is registered too.)
    public func registerErrors(_ types: any (Error & Decodable).Type...) { registerErrors(types) }

    /// ``registerErrors(_:)`` for a list.
    public func registerErrors(_ types: [any (Error & Decodable).Type]) {
        knownErrors.withLock { known in
            for type in types {
                if let name = _mangledTypeName(type) { known[name] = type }
            }
        }
    }

    /// A system whose remote calls go through `transport` (none: it only describes actors).
    package init(timeout: Duration = .seconds(5), textTransport transport: Transport?) {
        self.defaultTimeout = timeout
        self.transport = transport
    }

    @TaskLocal private static var timeoutOverride: Duration?
    @TaskLocal static var hostingClaim: HostingClaim?

    /// Runs `body` with `timeout` as the deadline of every remote call it makes (instead of the
    /// system's ``defaultTimeout``).
    ///
    /// ```swift
    /// let state = try await LifelineActorSystem.withTimeout(.seconds(30)) {
    ///     try await gateway.waitForSignIn(seconds: 25)
    /// }
    /// ```
    /// - Throws: what `body` throws.
    public static func withTimeout<T>(
        _ timeout: Duration, isolation: isolated (any Actor)? = #isolation, _ body: () async throws -> T
    ) async rethrows -> T {
        try await $timeoutOverride.withValue(timeout, operation: body, isolation: isolation)
    }

    /// The actor in this process with `id`, when there is one of type `Act` made with this system:
    /// then a call is a plain local call, without the broker. Nil makes the caller's reference
    /// remote: its calls go through the broker — always for an actor by key (`cart/ana`), even one
    /// active in this process.
    /// - Throws: never; the protocol allows it.
    public func resolve<Act>(id: ActorID, as actorType: Act.Type) throws -> Act?
    where Act: DistributedActor, ActorID == Act.ID {
        // An actor by key is reached through the broker even from the process hosting it: the
        // broker knows where its key is placed now, a reference kept here may outlive its activation.
        guard id.key == nil else { return nil }
        return local.withLock { $0[id]?.actor } as? Act
    }

    /// The service name of the actor being hosted (``Service/actor(_:)``); any other actor gets a
    /// name of its own that no service answers, so it is reachable only from this process.
    public func assignID<Act>(_ actorType: Act.Type) -> ActorID
    where Act: DistributedActor, ActorID == Act.ID {
        if let address = Self.hostingClaim?.take() { return LifelineActorSystem.ActorID(address: address) }
        return LifelineActorSystem.ActorID(service: "local." + Environment.uniqueToken())
    }

    /// Notes an actor made in this process, so that resolving its ID here gives the actor itself.
    public func actorReady<Act>(_ actor: Act) where Act: DistributedActor, ActorID == Act.ID {
        local.withLock { $0[actor.id] = LocalActor(actor: actor) }
    }

    /// Forgets the actor `id` named, which is going away (a newer actor of the same name stays).
    public func resignID(_ id: ActorID) {
        local.withLock { table in
            if table[id]?.actor == nil { table.removeValue(forKey: id) }
        }
    }

    /// An encoder for one remote call's arguments.
    public func makeInvocationEncoder() -> InvocationEncoder { InvocationEncoder() }

    /// Calls `target` on the service that hosts `actor` and decodes its answer.
    /// - Throws: ``LifelineError`` for the call's failure, the actor's own `Codable` error as its
    ///   type, or ``PayloadDecodingError`` for an answer that does not decode as `Res`.
    public func remoteCall<Act, Err, Res>(
        on actor: Act, target: RemoteCallTarget, invocation: inout InvocationEncoder, throwing: Err.Type,
        returning: Res.Type
    ) async throws -> Res where Act: DistributedActor, Act.ID == ActorID, Err: Error, Res: Codable {
        let answer = try await send(target, to: actor, invocation)
        return try LifelineClient.decodeAnswer(answer, as: Res.self)
    }

    /// Calls `target`, which returns nothing, on the service that hosts `actor`.
    /// - Throws: ``LifelineError`` for the call's failure, or the actor's own `Codable` error as its type.
    public func remoteCallVoid<Act, Err>(
        on actor: Act, target: RemoteCallTarget, invocation: inout InvocationEncoder, throwing: Err.Type
    ) async throws where Act: DistributedActor, Act.ID == ActorID, Err: Error {
        _ = try await send(target, to: actor, invocation)
    }

    private func send<Act: DistributedActor>(
        _ target: RemoteCallTarget, to actor: Act, _ invocation: InvocationEncoder
    ) async throws -> [UInt8] where Act.ID == ActorID {
        guard let function = DistributedFunction(demangled: target.description) else {
            throw LifelineError(
                .badRequest,
                "\(target.description) cannot be called remotely: Lifeline calls distributed funcs")
        }
        if invocation.substitutions.contains(where: { $0 != ObjectIdentifier(Act.self) }) {
            throw LifelineError(
                .badRequest, "\(function.signature) is generic; generic distributed funcs are not supported")
        }
        guard let transport else {
            throw LifelineError(.unavailable, "this actor system only describes actors; it has no connection")
        }
        let timeout = Self.timeoutOverride ?? defaultTimeout
        do {
            return try await transport(
                actor.id.description, function.method, invocation.body(keys: function.argumentKeys), timeout)
        } catch let error as LifelineError {
            throw ActorErrorCoding.rethrown(error) { name in knownErrors.withLock { $0[name] } }
        }
    }
}
