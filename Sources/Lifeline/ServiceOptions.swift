import LifelineProtocol
import LifelineSupport

/// The standard options of every service executable.
public struct ServiceOptions: Sendable {
    /// The usage lines of the standard options.
    public static let usage = """
          --broker EP               broker control endpoint (default: $LIFELINE_BROKER or \(Environment.defaultControlEndpoint))
          --name NAME               register under NAME instead of the built-in name
          --heartbeat-interval MS   heartbeat every MS milliseconds (default 1000)
          --liveness N              the broker may miss N heartbeats before dropping us (default 3)
          --inbound-limit N         events waiting for the handlers at most; when it is full the oldest
                                    is dropped and onGap hears of it (default 10000)
          --key FILE                this service's CURVE key pair (lifeline keys new; default $LIFELINE_KEY)
          --broker-key KEY|FILE     the broker's public key or .pub file (default $LIFELINE_BROKER_KEY)
        \(Console.usage)
          -h, --help                show this help
        """

    public var broker: String = Environment.brokerEndpoint
    public var name: String?
    public var heartbeat: HeartbeatSettings?
    /// How many events may wait for the service's handlers; beyond it the oldest is dropped.
    public var inboundLimit = 10_000
    /// CURVE keys, when the broker runs with CURVE (`--key`, `--broker-key` or the environment).
    public var credentials: ClientCredentials? = ClientCredentials.environment

    public init() {}

    /// Reads the standard options out of `arguments`, leaving the rest.
    package init(parsing arguments: inout CommandLineArguments) throws(UsageError) {
        if let broker = try arguments.option("--broker") { self.broker = broker }
        name = try arguments.option("--name")
        if let name, let problem = ServiceRegistration.nameProblem(name, what: "--name") {
            throw UsageError(problem)
        }
        if let limit = try arguments.integer("--inbound-limit", in: 1...100_000_000) { inboundLimit = limit }
        try Console.configure(parsing: &arguments)
        credentials = try ClientCredentials.parse(&arguments)
        let interval = try arguments.integer("--heartbeat-interval", in: HeartbeatSettings.intervalRange)
        let liveness = try arguments.integer("--liveness", in: HeartbeatSettings.livenessRange)
        if interval != nil || liveness != nil {
            heartbeat = HeartbeatSettings(
                intervalMilliseconds: interval ?? HeartbeatSettings.standard.intervalMilliseconds,
                liveness: liveness ?? HeartbeatSettings.standard.liveness)
        }
    }
}
