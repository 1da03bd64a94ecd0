import LifelineProtocol
import LifelineSupport

extension ServiceRunner {
    /// The standard options of every service executable.
    public struct Options: Sendable {
        /// The help lines of the standard options.
        public static var usage: String { CommandLineOption.helpText(declared) }

        static let brokerOption = CommandLineOption.value(
            "--broker", "EP[,EP…]",
            help:
                "broker control endpoint, or a broker group's members' list (default: $LIFELINE_BROKER or \(Environment.defaultControlEndpoint))"
        )
        static let nameOption = CommandLineOption.value(
            "--name", "NAME", help: "register under NAME instead of the built-in name")
        static let heartbeatIntervalOption = CommandLineOption.value(
            "--heartbeat-interval", "MS", help: "heartbeat every MS milliseconds (default 1000)")
        static let livenessOption = CommandLineOption.value(
            "--liveness", "N", help: "the broker may miss N heartbeats before dropping us (default 3)")
        static let inboundLimitOption = CommandLineOption.value(
            "--inbound-limit", "N",
            help:
                "events waiting for the handlers at most; when it is full the oldest is dropped and onGap hears of it (default 10000)"
        )

        /// Every standard option, as ``init(parsing:)`` reads them.
        package static let declared =
            [
                brokerOption, nameOption, heartbeatIntervalOption, livenessOption, inboundLimitOption,
                LifelineClient.Credentials.keyOption.helping(
                    "this service's CURVE key pair (lifeline keys new; default $LIFELINE_KEY)"),
                LifelineClient.Credentials.brokerKeyOption.helping(
                    "the broker's public key or .pub file (default $LIFELINE_BROKER_KEY)"),
            ] + Console.options

        public var broker: String = Environment.brokerEndpoint
        public var name: String?
        package var heartbeat: HeartbeatSettings?
        /// How many events may wait for the service's handlers; beyond it the oldest is dropped.
        public var inboundLimit = 10_000
        /// CURVE keys, when the broker runs with CURVE (`--key`, `--broker-key` or the environment).
        public var credentials: LifelineClient.Credentials? = LifelineClient.Credentials.environment

        public init() {}

        /// Reads the standard options out of `arguments`, leaving the rest.
        package init(parsing arguments: inout CommandLineArguments) throws(UsageError) {
            if let broker = try arguments.option(Self.brokerOption) {
                if let problem = Endpoint.problem(inList: broker) { throw UsageError("--broker: \(problem)") }
                self.broker = broker
            }
            name = try arguments.option(Self.nameOption)
            if let name, let problem = ServiceRegistration.nameProblem(name, what: "--name") {
                throw UsageError(problem)
            }
            if let limit = try arguments.integer(Self.inboundLimitOption, in: 1...100_000_000) {
                inboundLimit = limit
            }
            try Console.configure(parsing: &arguments)
            credentials = try LifelineClient.Credentials.parse(&arguments)
            let interval = try arguments.integer(
                Self.heartbeatIntervalOption, in: HeartbeatSettings.intervalRange)
            let liveness = try arguments.integer(Self.livenessOption, in: HeartbeatSettings.livenessRange)
            if interval != nil || liveness != nil {
                heartbeat = HeartbeatSettings(
                    intervalMilliseconds: interval ?? HeartbeatSettings.standard.intervalMilliseconds,
                    liveness: liveness ?? HeartbeatSettings.standard.liveness)
            }
        }
    }
}
