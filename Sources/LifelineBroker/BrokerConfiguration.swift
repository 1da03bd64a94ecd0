import LifelineProtocol
import ZeroMQ

/// Everything a broker can be told at start-up.
package struct BrokerConfiguration: Sendable {
    /// Where clients reach the broker when nobody says otherwise (loopback only).
    package static let defaultControlEndpoint = "tcp://127.0.0.1:7200"
    /// Where the lifecycle bus listens when nobody says otherwise (loopback only).
    package static let defaultBusEndpoint = "tcp://127.0.0.1:7201"

    /// Endpoints the ROUTER binds; the first is the one announced.
    package var controlEndpoints: [String] = [BrokerConfiguration.defaultControlEndpoint]
    /// Endpoints the XPUB binds; the first is the one announced to clients.
    package var busEndpoints: [String] = [BrokerConfiguration.defaultBusEndpoint]
    /// How often the broker heartbeats its services, and how many beats they may miss.
    package var heartbeat: HeartbeatSettings = .standard
    /// Events queued per bus subscriber before the XPUB drops them for that subscriber (0: no limit).
    package var busHighWaterMark = 100_000
    /// Larger requests are refused with 413 (libzmq drops anything over four times this).
    package var maximumMessageBytes = 8 << 20
    /// The most bytes of messages held for one control peer whose queue is full, and for all such
    /// peers together.
    package var backlogBytesPerPeer = 64 << 20
    package var backlogBytes = 256 << 20
    /// How long REGISTER and ATTACH wait for the client's bus subscription.
    package var attachTimeout: Duration = .seconds(5)
    /// How many publishers' publication ids the broker remembers to answer repeats (0: none).
    package var rememberedPublications = 65_536
    /// How many names one connection may register (REGISTER beyond it: 429).
    package var maximumNamesPerConnection = 100
    /// How many topics one bus connection may subscribe to; a subscription beyond it is refused.
    package var maximumSubscriptionsPerConnection = 1024
    /// The longest heartbeat window (interval × liveness) a service may ask for (400 beyond it):
    /// how long a dead peer's names may stay registered.
    package var maximumHeartbeatWindow: Duration = .seconds(60)
    /// How many bytes of events the journal holds at most; the oldest go first.
    package var journalMaximumBytes = 64 << 20
    /// How many distinct event names the broker keeps positions for (a PUBLISH of a new one
    /// beyond it: 429).
    package var maximumEventNames = 10_000
    /// Deadline of a CALL that names none.
    package var defaultCallTimeout: Duration = .seconds(5)
    /// Longest deadline a CALL may ask for.
    package var maximumCallTimeout: Duration = .seconds(3600)
    /// Deadline of one dispatch step when neither the event, the dispatcher nor the service names one.
    package var dispatchStepTimeout: Duration = .seconds(2)
    /// How long an acknowledged publish waits for its subscribers by default.
    package var acknowledgementTimeout: Duration = .seconds(5)
    /// Events the journal keeps for replay (0: none).
    package var journalCapacity = 10_000
    /// Age after which journal events are forgotten.
    package var journalMaximumAge: Duration = .seconds(600)
    /// Where the broker keeps what must survive a restart (the micro-app stack); nil keeps nothing.
    package var stateDirectory: String?
    /// The Launcher micro-app: started as soon as a host offers it, and starting it clears the stack above it.
    package var launcherApp: String?
    /// How long a host may take for one micro-app callback before the broker goes on.
    package var appCallbackTimeout: Duration = .seconds(2)
    /// After handling messages the broker keeps polling without sleeping for this long before it
    /// blocks (0: block at once). Saves a thread wake-up per message under load at the price of CPU;
    /// worth it on hosts with cores to spare.
    package var spinMicroseconds = 0
    /// The boot's phases, in order.
    package var bootPhases: [String] = BootTask.defaultPhases
    /// Field overrides of boot tasks by name (from the topology), and tasks it adds.
    package var bootOverrides: [String: JSONValue] = [:]
    /// The services a boot waits for (the topology's); a boot starts without the missing ones after
    /// ``bootWait``.
    package var expectedServices: [String] = []
    package var bootWait: Duration = .seconds(30)
    /// How many asynchronous boot tasks run at once.
    package var bootConcurrency = 4
    /// How long a service's start hook may take before its deferred lookups and calls go on anyway.
    package var serviceStartTimeout: Duration = .seconds(10)
    /// The broker's CURVE key pair: with it both sockets encrypt and every peer authenticates with a
    /// key of its own.
    package var curveKeys: CurveKeyPair?
    /// The policy file (allow-list and per-key grants), read again on ``BrokerServer/reloader``.
    package var policyPath: String?
    /// Binds a non-loopback endpoint without CURVE (refused otherwise).
    package var insecure = false
    /// Where to serve Prometheus metrics (`HOST:PORT`), if anywhere.
    package var metricsAddress: String?
    /// The bearer token `/metrics` asks for (`Authorization: Bearer TOKEN`); nil serves it to anyone
    /// who reaches it, which only loopback (or `--insecure`) allows.
    package var metricsToken: String?

    package init() {}

    /// Why these settings must not start a broker (a plain-text endpoint others can reach, a
    /// policy without CURVE); nil when they may.
    package var securityProblem: String? {
        if policyPath != nil && curveKeys == nil {
            return "--policy needs --key: without CURVE peers have no keys to check"
        }
        if let address = metricsAddress, metricsToken == nil, !insecure, !Self.isLoopbackHost(address) {
            return
                "refusing to serve /metrics on \(address) without a token: anyone who reaches it could read the broker's counters; give --metrics-token FILE, or --insecure"
        }
        guard curveKeys == nil, !insecure else { return nil }
        let exposed = (controlEndpoints + busEndpoints).filter { !Self.isLoopback($0) }
        guard let first = exposed.first else { return nil }
        return
            "refusing to bind \(first) in plain text: anyone who reaches it could read the bus and act as any service; give --key FILE (and --policy FILE), or --insecure"
    }

    /// True for a `HOST:PORT` on a loopback address (an empty host means every address).
    static func isLoopbackHost(_ address: String) -> Bool {
        if address.hasPrefix("[::1]:") { return true }
        let host = address.split(separator: ":", maxSplits: 1, omittingEmptySubsequences: false).first ?? ""
        return host == "localhost" || host == "127.0.0.1"
    }

    /// True for endpoints only this host can reach: ipc, inproc, and tcp on a loopback address.
    package static func isLoopback(_ endpoint: String) -> Bool {
        if endpoint.hasPrefix("ipc://") || endpoint.hasPrefix("inproc://") { return true }
        guard endpoint.hasPrefix("tcp://") else { return false }
        let address = endpoint.dropFirst(6)
        let host: Substring
        if address.hasPrefix("["), let end = address.firstIndex(of: "]") {
            host = address[address.index(after: address.startIndex)..<end]
        } else {
            host = address.split(separator: ":", maxSplits: 1).first ?? ""
        }
        return host == "localhost" || host == "::1" || host.hasPrefix("127.")
    }
}

/// Who this broker is, as HELLO reports it.
package struct BrokerIdentity: Sendable {
    package var pid: Int
    package var host: String
    package var version: String

    package init(pid: Int, host: String, version: String) {
        self.pid = pid
        self.host = host
        self.version = version
    }
}
