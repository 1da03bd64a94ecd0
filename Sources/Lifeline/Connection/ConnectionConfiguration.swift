import LifelineProtocol
import LifelineSupport

/// What a connection is for: a plain client, a bus subscriber, or a registered service.
package struct ConnectionConfiguration: Sendable {
    /// Which bus events the connection receives.
    enum Subscriptions: Sendable, Equatable {
        /// No bus socket (plain request/reply client).
        case none
        /// Exactly these events.
        case events([EventName])
        /// Every event (the CLI's `tail` without names).
        case all
    }

    /// The broker's control endpoint, or a broker group's, separated by commas: the connection
    /// tries them in turn and follows a standby's word on where the leader is.
    var brokerEndpoint: String {
        didSet {
            brokerEndpoints = Self.split(brokerEndpoint)
            addressProblem = Endpoint.problem(inList: brokerEndpoint)
        }
    }
    /// ``brokerEndpoint``'s endpoints.
    private(set) var brokerEndpoints: [String] = []
    /// Why ``brokerEndpoint`` names no broker (not `tcp://HOST:PORT`…); nil when it can.
    private(set) var addressProblem: String?
    /// Present for a service: register, heartbeat, answer calls.
    var registration: ServiceRegistration?
    var subscriptions: Subscriptions
    /// Unique token of this process run; the bus marker is `!token`.
    var token: String
    /// CURVE keys for both sockets, when the broker runs with CURVE.
    var credentials: LifelineClient.Credentials? = LifelineClient.Credentials.environment
    /// How long to wait for HELLO and REGISTER / ATTACH replies before retrying.
    var greetingTimeoutMilliseconds = 3000
    /// First reconnect delay; doubles on each failure up to ``maximumBackoffMilliseconds``. Each
    /// wait is scaled by ``jitter`` so that services that lost the broker together do not all
    /// return at the same instant; with these values a service is back within 2 s of its broker.
    var initialBackoffMilliseconds = 250
    var maximumBackoffMilliseconds = 1500
    /// How many events the service's handler queue has dropped (told to the broker with every
    /// heartbeat).
    var droppedEvents: @Sendable () -> UInt64 = { 0 }
    /// Events waiting for the handlers, those they ran by name, those that did not decode and those
    /// whose handler threw (heartbeats carry them).
    var handlerReport:
        @Sendable () -> (queued: UInt64, handled: [String: UInt64], undecodable: UInt64, failed: UInt64) = {
            (0, [:], 0, 0)
        }
    /// Told whenever the broker is heard from (a service holding actors by key watches it).
    var contact: BrokerContact?
    /// The actor keys the service holds active, sent with every REGISTER (``RegisterRequest/holding``).
    var heldKeys: @Sendable () -> [String] = { [] }
    /// A factor for each backoff wait, from 0.8 to 1.2 (a constant in tests).
    var jitter: @Sendable () -> Double = { Double.random(in: 0.8...1.2) }
    /// How long shutdown waits for UNREGISTER to be answered.
    var unregisterTimeoutMilliseconds = 1000
    /// Where a restarted service resumes: the broker replays what it missed after this cursor.
    var resume: EventCursor?
    /// Takes a run of live events (``ConnectionEffect/deliverRun(_:receivedAt:)``) on the socket
    /// thread before they are delivered one by one, and returns how many it handled from the front
    /// (a service host's inline handlers: all of them or none).
    var deliverInline: (@Sendable (ArraySlice<BusMessage>, _ receivedAt: UInt64) -> Int)?

    init(
        brokerEndpoint: String, registration: ServiceRegistration? = nil,
        subscriptions: Subscriptions = .none, token: String
    ) {
        self.brokerEndpoint = brokerEndpoint
        brokerEndpoints = Self.split(brokerEndpoint)
        addressProblem = Endpoint.problem(inList: brokerEndpoint)
        self.registration = registration
        self.subscriptions = subscriptions
        self.token = token
    }

    /// True when the connection needs HELLO and a join step before it is ready.
    var joins: Bool { registration != nil || subscriptions != .none }

    /// The SUB subscriptions: event topics, then the marker (which must come last).
    var busSubscriptions: [[UInt8]] {
        let topics: [[UInt8]]
        switch subscriptions {
        case .none: topics = []
        case .events(let names): topics = names.map(BusMessage.topic(for:))
        case .all: topics = [[]]
        }
        return topics + [Array(("!" + token).utf8)]
    }

    /// The endpoints of a comma-separated list (the list itself when it names none).
    package static func split(_ list: String) -> [String] {
        let endpoints = list.split(separator: ",").map { String($0) }
        return endpoints.isEmpty ? [list] : endpoints
    }
}
