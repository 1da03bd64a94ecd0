import LifelineProtocol

/// The processes of one deployment, read from a JSON file such as `deploy/topology.json`:
///
/// ```json
/// {"broker": {"control": "tcp://127.0.0.1:7200", "bus": "tcp://127.0.0.1:7201", "launcher": "launcher"},
///  "supervisor": {"restarts": 5, "seconds": 10},
///  "services": [{"name": "push", "executable": "lifeline-push", "args": [], "restart": "on-failure",
///                "after": ["gateway"], "replicas": 1}]}
/// ```
///
/// With `"group"` (``GroupTopology``) the broker is a group of members, each with its own endpoints.
package struct Topology: Sendable, Equatable {
    /// When `lifeline up` starts a service again after it exited.
    package enum Restart: String, Sendable, Equatable, CaseIterable {
        /// Whatever the exit.
        case always
        /// After a non-zero exit status or a signal (the default).
        case onFailure = "on-failure"
        case never
    }

    /// One service process to launch.
    package struct ServiceEntry: Sendable, Equatable {
        package var name: String
        package var executable: String
        package var arguments: [String]
        package var restart: Restart = .onFailure
        /// Services that must be up (registered) before this one starts.
        package var after: [String] = []
        /// How many processes run the service (its instances; the service must be replicable when
        /// more than one).
        package var replicas = 1
    }

    /// The most instances of one service a topology may run.
    package static let maximumReplicas = 64

    /// OTP's restart intensity: beyond `restarts` restarts in `seconds` the supervisor gives up on
    /// a service.
    package var restartLimit = (restarts: 5, seconds: 10)

    package static func == (left: Topology, right: Topology) -> Bool {
        left.control == right.control && left.bus == right.bus && left.launcher == right.launcher
            && left.bootPhases == right.bootPhases && left.bootTasks == right.bootTasks
            && left.bootWaitMilliseconds == right.bootWaitMilliseconds && left.services == right.services
            && left.restartLimit == right.restartLimit && left.group == right.group
    }

    static let topFields = ["broker", "boot", "services", "supervisor", "group"]
    static let bootFields = ["phases", "tasks", "waitMs"]
    static let brokerFields = ["control", "bus", "launcher"]
    static let serviceFields = ["name", "executable", "args", "restart", "after", "replicas"]
    static let supervisorFields = ["restarts", "seconds"]
    static let bootTaskFields = [
        "name", "service", "kind", "phase", "priority", "async", "after", "condition", "deadlineMs",
        "required",
        "runOnce",
    ]

    package var control: String
    package var bus: String
    /// The Launcher micro-app, if the topology has one.
    package var launcher: String?
    /// The boot's phases (default: ``BootTask/defaultPhases``).
    package var bootPhases: [String]
    /// Field overrides of boot tasks, by task name; a task no service declares needs `service` and
    /// `"kind": "start"`.
    package var bootTasks: [String: JSONValue]
    package var bootWaitMilliseconds: Int?
    package var services: [ServiceEntry]
    /// The broker group, when the topology runs one instead of a single broker.
    package var group: GroupTopology?

    /// Reads a topology file's text: JSON, with no member given twice in one object (the last would
    /// win, silently: a second `services` list replacing the first), then ``init(json:)``.
    /// - Throws: `JSONParseError` when the text is not JSON, ``ProtocolError`` (400) naming a member
    ///   given twice or what is wrong with the topology.
    package static func parse(_ text: [UInt8]) throws -> Topology {
        let json = try JSONParser.parse(text)
        if let repeated = try JSONParser.firstRepeatedMember(in: text) {
            throw ProtocolError(.badRequest, "'\(repeated)' is given twice")
        }
        return try Topology(json: json)
    }

    /// Reads and checks a topology document, naming the first problem.
    package init(json: JSONValue) throws(ProtocolError) {
        guard case .object(let top) = json else {
            throw ProtocolError(.badRequest, "a topology is a JSON object")
        }
        try Self.refuseUnknown(top, Self.topFields, at: "the topology")
        if let broker = json["broker"] {
            guard case .object(let members) = broker else {
                throw ProtocolError(.badRequest, "broker must be an object with control, bus and launcher")
            }
            try Self.refuseUnknown(members, Self.brokerFields, at: "broker")
            for field in Self.brokerFields {
                if let value = members[field], value.stringValue == nil {
                    throw ProtocolError(.badRequest, "broker.\(field) must be a string, not \(value)")
                }
            }
            for field in ["control", "bus"] {
                if let endpoint = members[field]?.stringValue, let problem = Self.endpointProblem(endpoint) {
                    throw ProtocolError(.badRequest, "broker.\(field): \(problem)")
                }
            }
        }
        if let supervisor = json["supervisor"] {
            guard case .object(let members) = supervisor else {
                throw ProtocolError(.badRequest, "supervisor must be an object with restarts and seconds")
            }
            try Self.refuseUnknown(members, Self.supervisorFields, at: "supervisor")
            guard let restarts = supervisor["restarts"]?.intValue, (0...1000).contains(restarts),
                let seconds = supervisor["seconds"]?.intValue, (1...86_400).contains(seconds)
            else {
                throw ProtocolError(
                    .badRequest,
                    "supervisor needs 'restarts' (0...1000) and 'seconds' (1...86400), e.g. {\"restarts\": 5, \"seconds\": 10}"
                )
            }
            restartLimit = (Int(restarts), Int(seconds))
        }
        if let group = json["group"] {
            if json["broker"]?["control"] != nil || json["broker"]?["bus"] != nil {
                throw ProtocolError(
                    .badRequest,
                    "broker.control and broker.bus do not apply with a group: each of group.members has its own"
                )
            }
            self.group = try GroupTopology(json: group)
        }
        control = json["broker"]?["control"]?.stringValue ?? BrokerConfiguration.defaultControlEndpoint
        bus = json["broker"]?["bus"]?.stringValue ?? BrokerConfiguration.defaultBusEndpoint
        if control == bus && !control.hasSuffix(":*") {
            throw ProtocolError(
                .badRequest, "broker.control and broker.bus are both \(control): give each its own")
        }
        launcher = json["broker"]?["launcher"]?.stringValue
        if let launcher, let problem = ServiceRegistration.nameProblem(launcher, what: "broker.launcher") {
            throw ProtocolError(.badRequest, problem)
        }
        if let boot = json["boot"] {
            guard case .object(let members) = boot else {
                throw ProtocolError(.badRequest, "boot must be an object with phases, tasks and waitMs")
            }
            try Self.refuseUnknown(members, Self.bootFields, at: "boot")
            if let phases = boot["phases"], phases.arrayValue == nil {
                throw ProtocolError(.badRequest, "boot.phases must be a list of names")
            }
            if let tasks = boot["tasks"], tasks.arrayValue == nil {
                throw ProtocolError(.badRequest, "boot.tasks must be a list of tasks")
            }
            if let wait = boot["waitMs"], !(wait.intValue.map { (0...3_600_000).contains($0) } ?? false) {
                throw ProtocolError(
                    .badRequest, "boot.waitMs must be an integer within 0...3600000, not \(wait)")
            }
        }
        if let phases = json["boot"]?["phases"]?.arrayValue,
            let repeated = phases.enumerated().first(where: { phases[..<$0.offset].contains($0.element) })?
                .element
        {
            let name = repeated.stringValue ?? "\(repeated)"
            throw ProtocolError(.badRequest, "boot.phases names \(name) twice")
        }
        if let phases = json["boot"]?["phases"]?.arrayValue, !phases.contains("services") {
            throw ProtocolError(
                .badRequest,
                "boot.phases must include 'services': each service's start task (NAME.start) runs in it")
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
            guard case .object(let members) = entry, let name = entry["name"]?.stringValue, name.contains(".")
            else {
                throw ProtocolError(.badRequest, "boot.tasks[\(index)] needs a 'name' like service.task")
            }
            try Self.refuseUnknown(members, Self.bootTaskFields, at: "boot.tasks[\(index)] (\(name))")
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
        if let listed = json["services"], listed.arrayValue == nil {
            throw ProtocolError(.badRequest, "services must be a list of services, not \(listed)")
        }
        var services: [ServiceEntry] = []
        for (index, entry) in (json["services"]?.arrayValue ?? []).enumerated() {
            guard case .object(let members) = entry, let name = entry["name"]?.stringValue else {
                throw ProtocolError(.badRequest, "services[\(index)] needs a string 'name'")
            }
            try Self.refuseUnknown(members, Self.serviceFields, at: "services[\(index)] ('\(name)')")
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
            if let args = entry["args"], args.arrayValue == nil {
                throw ProtocolError(
                    .badRequest, "services[\(index)].args must be a list of strings, not \(args)")
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
            var service = ServiceEntry(name: name, executable: executable, arguments: arguments)
            if let restart = entry["restart"] {
                guard let value = restart.stringValue.flatMap(Restart.init(rawValue:)) else {
                    throw ProtocolError(
                        .badRequest,
                        "services[\(index)] ('\(name)').restart must be always, on-failure or never")
                }
                service.restart = value
            }
            if let after = entry["after"] {
                guard let names = after.arrayValue?.compactMap(\.stringValue),
                    names.count == after.arrayValue?.count
                else {
                    throw ProtocolError(
                        .badRequest, "services[\(index)] ('\(name)').after must be a list of service names")
                }
                service.after = names
            }
            if let replicas = entry["replicas"] {
                guard let count = replicas.intValue, (1...Int64(Self.maximumReplicas)).contains(count) else {
                    throw ProtocolError(
                        .badRequest,
                        "services[\(index)] ('\(name)').replicas must be an integer within 1...\(Self.maximumReplicas)"
                    )
                }
                service.replicas = Int(count)
            }
            services.append(service)
        }
        self.services = services
        for service in services {
            for dependency in service.after where !services.contains(where: { $0.name == dependency }) {
                throw ProtocolError(
                    .badRequest,
                    "service '\(service.name)' starts after '\(dependency)', which the topology does not launch"
                )
            }
        }
        _ = try startLayers()
    }

    /// The services in start order, as layers: each layer's services depend only on earlier layers
    /// and start together; `lifeline down` stops the layers in reverse. A cycle is refused, named.
    package func startLayers() throws(ProtocolError) -> [[String]] {
        var remaining = services
        var started: Set<String> = []
        var layers: [[String]] = []
        while !remaining.isEmpty {
            let ready = remaining.filter { $0.after.allSatisfy(started.contains) }
            guard !ready.isEmpty else {
                let names = remaining.map(\.name).sorted().joined(separator: ", ")
                throw ProtocolError(.badRequest, "the services' 'after' lists form a cycle among: \(names)")
            }
            layers.append(ready.map(\.name))
            started.formUnion(ready.map(\.name))
            remaining.removeAll { started.contains($0.name) }
        }
        return layers
    }

    /// Why `endpoint` is not an address a broker binds (`tcp://HOST:PORT`, `ipc://PATH`); nil when
    /// it is one.
    static func endpointProblem(_ endpoint: String) -> String? {
        if endpoint.hasPrefix("ipc://") && endpoint.count > 6 { return nil }
        guard endpoint.hasPrefix("tcp://"), let colon = endpoint.lastIndex(of: ":"),
            endpoint.distance(from: endpoint.startIndex, to: colon) > 6,
            endpoint[endpoint.index(after: colon)...] == "*"
                || UInt16(endpoint[endpoint.index(after: colon)...]) != nil
        else {
            return "'\(endpoint)' is not a tcp://HOST:PORT or ipc://PATH endpoint"
        }
        return nil
    }

    private static func refuseUnknown(_ members: [String: JSONValue], _ fields: [String], at place: String)
        throws(ProtocolError)
    {
        if let unknown = members.keys.sorted().first(where: { !fields.contains($0) }) {
            throw ProtocolError(
                .badRequest, "\(place): unknown key '\(unknown)'; keys: \(fields.joined(separator: ", "))")
        }
    }
}
