import LifelineProtocol

/// The processes of one deployment, read from a JSON file such as `deploy/topology.json`:
///
/// ```json
/// {"broker": {"control": "tcp://127.0.0.1:7200", "bus": "tcp://127.0.0.1:7201", "launcher": "launcher"},
///  "services": [{"name": "push", "executable": "lifeline-push", "args": []}]}
/// ```
public struct Topology: Sendable, Equatable {
    /// One service process to launch.
    public struct ServiceEntry: Sendable, Equatable {
        public var name: String
        public var executable: String
        public var arguments: [String]
    }

    public var control: String
    public var bus: String
    /// The Launcher micro-app, if the topology has one.
    public var launcher: String?
    /// The boot's phases (default: ``BootTask/defaultPhases``).
    public var bootPhases: [String]
    /// Field overrides of boot tasks, by task name; a task no service declares needs `service` and
    /// `"kind": "start"`.
    public var bootTasks: [String: JSONValue]
    public var bootWaitMilliseconds: Int?
    public var services: [ServiceEntry]

    /// Reads and checks a topology document, naming the first problem.
    public init(json: JSONValue) throws(ProtocolError) {
        guard case .object = json else { throw ProtocolError(.badRequest, "a topology is a JSON object") }
        control = json["broker"]?["control"]?.stringValue ?? BrokerConfiguration.defaultControlEndpoint
        bus = json["broker"]?["bus"]?.stringValue ?? BrokerConfiguration.defaultBusEndpoint
        launcher = json["broker"]?["launcher"]?.stringValue
        if let launcher, let problem = ServiceRegistration.nameProblem(launcher, what: "broker.launcher") {
            throw ProtocolError(.badRequest, problem)
        }
        bootPhases = try (json["boot"]?["phases"]?.arrayValue ?? BootTask.defaultPhases.map { .string($0) })
            .map {
                (value) throws(ProtocolError) -> String in
                guard let phase = value.stringValue,
                    ServiceRegistration.nameProblem(phase, what: "a phase") == nil
                else {
                    throw ProtocolError(.badRequest, "boot.phases must be names")
                }
                return phase
            }
        var bootTasks: [String: JSONValue] = [:]
        for (index, entry) in (json["boot"]?["tasks"]?.arrayValue ?? []).enumerated() {
            guard let name = entry["name"]?.stringValue, name.contains(".") else {
                throw ProtocolError(.badRequest, "boot.tasks[\(index)] needs a 'name' like service.task")
            }
            var probe = BootTask(name: name, service: String(name.split(separator: ".")[0]))
            try probe.apply(entry)
            if !bootPhases.contains(probe.phase) {
                throw ProtocolError(
                    .badRequest, "boot.tasks[\(index)] (\(name)) names the unknown phase '\(probe.phase)'")
            }
            bootTasks[name] = entry
        }
        self.bootTasks = bootTasks
        bootWaitMilliseconds = json["boot"]?["waitMs"]?.intValue.map { Int($0) }
        var services: [ServiceEntry] = []
        for (index, entry) in (json["services"]?.arrayValue ?? []).enumerated() {
            guard let name = entry["name"]?.stringValue else {
                throw ProtocolError(.badRequest, "services[\(index)] needs a string 'name'")
            }
            if let problem = ServiceRegistration.nameProblem(name, what: "services[\(index)].name") {
                throw ProtocolError(.badRequest, problem)
            }
            guard let executable = entry["executable"]?.stringValue, !executable.isEmpty,
                !executable.contains("/") || executable.hasPrefix("/")
            else {
                throw ProtocolError(
                    .badRequest,
                    "services[\(index)] ('\(name)') needs an 'executable': a product name or an absolute path"
                )
            }
            let arguments = try (entry["args"]?.arrayValue ?? []).map {
                (value) throws(ProtocolError) -> String in
                guard let text = value.stringValue, !text.contains(" ") else {
                    throw ProtocolError(.badRequest, "services[\(index)].args must be strings without spaces")
                }
                return text
            }
            if services.contains(where: { $0.name == name }) {
                throw ProtocolError(.badRequest, "service '\(name)' appears twice")
            }
            services.append(ServiceEntry(name: name, executable: executable, arguments: arguments))
        }
        self.services = services
    }
}
