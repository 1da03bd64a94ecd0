import LifelineProtocol

/// A Lifeline service: a name, handlers for the lifecycle events it cares about, request methods, and
/// the DTService hooks. Build it with the chained modifiers, then call ``main()``:
///
/// ```swift
/// try await Service("push")
///     .on(.didRegisterForRemoteNotifications) { event in print(event["deviceToken"] ?? "-") }
///     .method("status") { _ in ["tokens": 1] }
///     .main()
/// ```
///
/// The service subscribes on the bus to exactly the events it has handlers for.
public struct Service: Sendable {
    public typealias EventHandler = @Sendable (Event) async throws -> Void
    public typealias MethodHandler = @Sendable (CallRequest) async throws -> JSONValue
    public typealias Hook = @Sendable (ServiceContext) async throws -> Void

    public let name: String
    private(set) var eventHandlers: [EventName: EventHandler] = [:]
    private(set) var methodHandlers: [String: MethodHandler] = [:]
    private(set) var didCreateHook: Hook?
    private(set) var startHook: Hook?
    private(set) var willDestroyHook: Hook?
    private(set) var heartbeat = HeartbeatSettings.standard

    /// A service named `name` (letters, digits, `_`, `-`, `.`).
    public init(_ name: String) { self.name = name }

    /// Handles `event`; the service subscribes to it. Events reach handlers one at a time, in bus order.
    public func on(_ event: EventName, perform handler: @escaping EventHandler) -> Service {
        var copy = self
        copy.eventHandlers[event] = handler
        return copy
    }

    /// Answers calls to `method`; calls run concurrently. Throw ``ServiceError`` to answer with a status.
    public func method(_ method: String, _ handler: @escaping MethodHandler) -> Service {
        var copy = self
        copy.methodHandlers[method] = handler
        return copy
    }

    /// Runs once before the service connects (DTService didCreate).
    public func didCreate(_ hook: @escaping Hook) -> Service {
        var copy = self
        copy.didCreateHook = hook
        return copy
    }

    /// Runs once after the first registration with the broker (DTService start).
    public func start(_ hook: @escaping Hook) -> Service {
        var copy = self
        copy.startHook = hook
        return copy
    }

    /// Runs once at shutdown, before the service unregisters (DTService willDestroy).
    public func willDestroy(_ hook: @escaping Hook) -> Service {
        var copy = self
        copy.willDestroyHook = hook
        return copy
    }

    /// Sets how often the service heartbeats and how many beats the broker lets it miss.
    public func heartbeat(intervalMilliseconds: Int, liveness: Int) -> Service {
        var copy = self
        copy.heartbeat = HeartbeatSettings(intervalMilliseconds: intervalMilliseconds, liveness: liveness)
        return copy
    }

    /// The events the service handles, sorted.
    public var events: [EventName] { eventHandlers.keys.sorted() }
    /// The methods the service answers, sorted.
    public var methods: [String] { methodHandlers.keys.sorted() }
}
