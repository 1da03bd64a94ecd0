import LifelineProtocol

/// A topology's broker group (`"group"`), for `lifeline up` to run every member on this machine:
///
/// ```json
/// "group": {"name": "demo", "etcd": "http://127.0.0.1:2389", "leaseTTL": 2, "keys": "group-keys",
///           "members": [{"member": "a", "control": "tcp://127.0.0.1:7310", "bus": "tcp://127.0.0.1:7320",
///                        "replicate": "tcp://127.0.0.1:7330"}, …]}
/// ```
package struct GroupTopology: Sendable, Equatable {
    /// One member: its name and the endpoints it binds.
    package struct Member: Sendable, Equatable {
        package var member: String
        package var control: String
        package var bus: String
        package var replicate: String
    }

    package var name: String
    /// etcd's client URLs.
    package var etcd: [String]
    package var leaseSeconds: Int?
    package var members: [Member]
    /// The members' CURVE keys' directory (`--group-keys`); nil: `lifeline up` makes them in its
    /// run directory.
    package var keys: String?

    static let fields = ["name", "etcd", "leaseTTL", "members", "keys"]
    static let memberFields = ["member", "control", "bus", "replicate"]

    /// The members' control endpoints, as clients take them (`--broker A,B,C`).
    package var brokers: String { members.map(\.control).joined(separator: ",") }

    /// Reads and checks `json`, naming the first problem.
    package init(json: JSONValue) throws(ProtocolError) {
        guard case .object(let top) = json else {
            throw ProtocolError(.badRequest, "group must be an object")
        }
        if let unknown = top.keys.sorted().first(where: { !Self.fields.contains($0) }) {
            throw Self.problem(
                "group: unknown key '\(unknown)'; keys: \(Self.fields.joined(separator: ", "))")
        }
        guard let name = json["name"]?.stringValue else { throw Self.problem("group needs a 'name'") }
        if let problem = ServiceRegistration.nameProblem(name, what: "group.name") {
            throw Self.problem(problem)
        }
        self.name = name
        let urls =
            json["etcd"]?.stringValue.map { $0.split(separator: ",").map(String.init) }
            ?? json["etcd"]?.arrayValue?.compactMap(\.stringValue) ?? []
        guard !urls.isEmpty, urls.allSatisfy({ $0.hasPrefix("http://") }) else {
            throw Self.problem(
                "group.etcd must be etcd's client URL(s), http://HOST:PORT (a string or a list)")
        }
        etcd = urls
        if let ttl = json["leaseTTL"] {
            guard let seconds = ttl.intValue, (1...60).contains(seconds) else {
                throw Self.problem("group.leaseTTL must be seconds within 1...60")
            }
            leaseSeconds = Int(seconds)
        }
        if let keys = json["keys"] {
            guard let directory = keys.stringValue, !directory.isEmpty else {
                throw Self.problem("group.keys must be the directory of the members' key files")
            }
            self.keys = directory
        }
        var members: [Member] = []
        for (index, entry) in (json["members"]?.arrayValue ?? []).enumerated() {
            guard case .object(let fields) = entry else {
                throw Self.problem("group.members[\(index)] must be an object")
            }
            if let unknown = fields.keys.sorted().first(where: { !Self.memberFields.contains($0) }) {
                throw Self.problem(
                    "group.members[\(index)]: unknown key '\(unknown)'; keys: \(Self.memberFields.joined(separator: ", "))"
                )
            }
            let values = Self.memberFields.map { entry[$0]?.stringValue ?? "" }
            guard !values.contains("") else {
                throw Self.problem(
                    "group.members[\(index)] needs strings \(Self.memberFields.map { "'\($0)'" }.joined(separator: ", "))"
                )
            }
            if let problem = ServiceRegistration.nameProblem(
                values[0], what: "group.members[\(index)].member")
            {
                throw Self.problem(problem)
            }
            if members.contains(where: { $0.member == values[0] }) {
                throw Self.problem("group member '\(values[0])' appears twice")
            }
            members.append(
                Member(member: values[0], control: values[1], bus: values[2], replicate: values[3]))
        }
        guard !members.isEmpty else { throw Self.problem("group.members lists no member") }
        self.members = members
    }

    private static func problem(_ message: String) -> ProtocolError { ProtocolError(.badRequest, message) }
}
