import Distributed
import LifelineProtocol
import Synchronization

/// A distributed actor a service hosts, seen without its type: made when the service registers,
/// dropped when it leaves (``Service/actor(_:)``).
protocol HostedActorBox: Sendable {
    /// Makes the actor under the service name `name`, for the connection of `context`.
    /// - Throws: ``LifelineError`` when the factory returned an actor with another ID.
    func start(_ context: ServiceContext, as name: String) throws
    /// Drops the actor `start` made: calls that arrive later are answered 503.
    func stop(_ context: ServiceContext, as name: String)
    /// Each method's argument and reply shapes, taken from the func's types.
    func describeMethods() async -> [String: ServiceDescription.Method]
}

/// The actor of type `A` a service hosts, and how its distributed funcs answer CALLs.
final class HostedActor<A: DistributedActor>: HostedActorBox where A.ActorSystem == LifelineActorSystem {
    let listing: DistributedFunctionTable.Listing
    private let make: @Sendable (ServiceContext) -> A
    /// The actors made, by connection and name: copies of one ``Service`` value may run more than
    /// once in a process (tests, `--name`), each with actors of its own.
    private let live = Mutex<[HostingKey: A]>([:])

    init(make: @escaping @Sendable (ServiceContext) -> A) {
        self.make = make
        self.listing = DistributedFunctionTable.listing(of: A.self)
    }

    func start(_ context: ServiceContext, as name: String) throws {
        let claim = HostingClaim(name)
        let actor = LifelineActorSystem.$hostingClaim.withValue(claim) { make(context) }
        guard actor.id.service == name else {
            throw LifelineError(
                .badRequest,
                "the factory of '\(name)' must make its \(A.self) there, with a LifelineActorSystem (context.actorSystem); it returned one named '\(actor.id)'"
            )
        }
        live.withLock { $0[HostingKey(context, name)] = actor }
    }

    func stop(_ context: ServiceContext, as name: String) {
        live.withLock { _ = $0.removeValue(forKey: HostingKey(context, name)) }
    }

    /// Runs the func `entry` names with the call's body as its arguments; its value is the answer.
    /// - Throws: ``ServiceError``: 400 for arguments that do not decode, 503 when the actor is not
    ///   hosted now, and what the func threw (``ActorErrorCoding``).
    func answer(_ entry: DistributedFunctionTable.Entry, _ call: CallRequest) async throws -> [UInt8] {
        guard let actor = live.withLock({ $0[HostingKey(call.context, call.context.serviceName)] }) else {
            throw ServiceError(.unavailable, "'\(call.context.serviceName)' is not hosting its actor now")
        }
        return try await Self.invoke(entry, on: actor, text: call.text)
    }

    /// Runs the func `entry` names on `actor` with `text` (a JSON object keyed by argument labels) as
    /// its arguments; its value, encoded, is the answer.
    /// - Throws: ``ServiceError``: 400 for arguments that do not decode, and what the func threw
    ///   (``ActorErrorCoding``).
    static func invoke(_ entry: DistributedFunctionTable.Entry, on actor: A, text: [UInt8]) async throws
        -> [UInt8]
    {
        var decoder = try LifelineActorSystem.InvocationDecoder(function: entry.function, text: text)
        let handler = LifelineActorSystem.ResultHandler()
        if let target = entry.target {
            try await target.execute(on: actor, decoder: &decoder, handler: handler)
        } else {
            try await actor.actorSystem.executeDistributedTarget(
                on: actor, target: RemoteCallTarget(entry.identifier), invocationDecoder: &decoder,
                handler: handler)
        }
        if let failure = decoder.failure {
            throw ServiceError(.badRequest, "\(entry.function.signature): \(failure)")
        }
        do { return try handler.result() } catch {
            throw ActorErrorCoding.reply(for: error, from: entry.function)
        }
    }

    func describeMethods() async -> [String: ServiceDescription.Method] { await Self.describe(listing) }

    /// Each method's argument and reply shapes for the funcs of `listing`, taken from their types.
    static func describe(_ listing: DistributedFunctionTable.Listing) async -> [String: ServiceDescription
        .Method]
    {
        // A reference that is never local: the recording decoder reads each argument's type from
        // the func's own accessor and stops it before the call.
        let describing = LifelineActorSystem(textTransport: nil)
        let proxy = try? A.resolve(id: LifelineActorSystem.ActorID(service: "describing"), using: describing)
        var methods: [String: ServiceDescription.Method] = [:]
        for entry in listing.entries {
            var arguments = TypeShape.object([], complete: true)
            if let proxy, !entry.function.argumentKeys.isEmpty {
                var decoder = LifelineActorSystem.InvocationDecoder(recording: entry.function)
                try? await describing.executeDistributedTarget(
                    on: proxy, target: RemoteCallTarget(entry.identifier), invocationDecoder: &decoder,
                    handler: LifelineActorSystem.ResultHandler())
                arguments = decoder.recordedShape
            }
            methods[entry.function.method] = ServiceDescription.Method(
                summary: "distributed func \(entry.function.signature)",
                arguments: entry.function.argumentKeys.isEmpty ? "" : arguments.text,
                reply: Self.replyShape(of: entry.identifier))
        }
        return methods
    }

    /// The shape of the func's return type, `null` for none.
    private static func replyShape(of identifier: String) -> String {
        let returned = Array(identifier.utf8).withUnsafeBufferPointer { name in
            __getReturnTypeInfo(name.baseAddress!, UInt(name.count), nil, nil)
        }
        guard let returned, returned != Void.self else { return "null" }
        guard let decodable = returned as? any Decodable.Type else { return "\(returned)" }
        return shape(of: decodable)
    }

    private static func shape<T: Decodable>(of type: T.Type) -> String { TypeShape.of(type).text }
}
