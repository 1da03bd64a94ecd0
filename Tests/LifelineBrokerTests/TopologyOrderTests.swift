import LifelineProtocol
import Testing

@testable import LifelineBroker

@Suite("Topology start order")
struct TopologyOrderTests {
    @Test("services start in layers of their 'after' dependencies; down stops them in reverse")
    func layers() throws {
        let topology = try Topology(json: [
            "services": [
                ["name": "push", "executable": "lifeline-push", "after": ["gateway"]],
                ["name": "gateway", "executable": "lifeline-gateway"],
                ["name": "url", "executable": "lifeline-url"],
                [
                    "name": "shell", "executable": "lifeline-shell", "after": ["gateway", "push"],
                    "restart": "never",
                ],
            ]
        ])
        #expect(try topology.startLayers() == [["gateway", "url"], ["push"], ["shell"]])
        #expect(topology.services.first { $0.name == "shell" }?.restart == .never)
        #expect(topology.services.first { $0.name == "url" }?.restart == .onFailure)
        #expect(topology.restartLimit == (5, 10))
    }

    @Test("a group topology names its members and their endpoints; each problem in it is named")
    func group() throws {
        let member: (String) -> JSONValue = { name in
            [
                "member": .string(name), "control": "tcp://127.0.0.1:1", "bus": "tcp://127.0.0.1:2",
                "replicate": "tcp://127.0.0.1:3",
            ]
        }
        let topology = try Topology(json: [
            "group": [
                "name": "demo", "etcd": "http://127.0.0.1:2389,http://127.0.0.1:2391", "leaseTTL": 3,
                "members": [member("a"), member("b"), member("c")],
            ]
        ])
        let group = try #require(topology.group)
        #expect(group.members.map(\.member) == ["a", "b", "c"])
        #expect(group.etcd == ["http://127.0.0.1:2389", "http://127.0.0.1:2391"])
        #expect(group.leaseSeconds == 3)
        #expect(group.brokers == "tcp://127.0.0.1:1,tcp://127.0.0.1:1,tcp://127.0.0.1:1")
        let problems: [(JSONValue, String)] = [
            (
                [
                    "broker": ["control": "tcp://127.0.0.1:7200"],
                    "group": ["name": "g", "etcd": "http://e:1", "members": [member("a")]],
                ],
                "broker.control and broker.bus do not apply with a group: each of group.members has its own"
            ),
            (
                ["group": ["name": "g", "etcd": "e:1", "members": [member("a")]]],
                "group.etcd must be etcd's client URL(s), http://HOST:PORT (a string or a list)"
            ),
            (
                ["group": ["name": "g", "etcd": "http://e:1", "members": [member("a"), member("a")]]],
                "group member 'a' appears twice"
            ),
            (
                ["group": ["name": "g", "etcd": "http://e:1", "members": [["member": "a"]]]],
                "group.members[0] needs strings 'member', 'control', 'bus', 'replicate'"
            ),
            (["group": ["name": "g", "etcd": "http://e:1", "members": []]], "group.members lists no member"),
            (
                ["group": ["name": "g", "etcd": "http://e:1", "size": 3]],
                "group: unknown key 'size'; keys: name, etcd, leaseTTL, members, keys"
            ),
        ]
        for (json, message) in problems {
            #expect(throws: ProtocolError(.badRequest, message)) { try Topology(json: json) }
        }
    }

    @Test(
        "a value of the wrong kind, an unknown key at any level, or a boot without its services phase is refused, named"
    )
    func wrongKinds() {
        let push: JSONValue = ["name": "a", "executable": "lifeline-push"]
        let problems: [(JSONValue, String)] = [
            (["broker": "tcp://127.0.0.1:1"], "broker must be an object with control, bus and launcher"),
            (["broker": ["control": 5]], "broker.control must be a string, not 5"),
            (["broker": ["bus": .null]], "broker.bus must be a string, not null"),
            (["broker": ["launcher": 5]], "broker.launcher must be a string, not 5"),
            (
                ["broker": ["control": "garbage"]],
                "broker.control: 'garbage' is not a tcp://HOST:PORT or ipc://PATH endpoint"
            ),
            (
                ["broker": ["control": "tcp://127.0.0.1:7300", "bus": "tcp://127.0.0.1:7300"]],
                "broker.control and broker.bus are both tcp://127.0.0.1:7300: give each its own"
            ),
            (
                ["supervisor": ["restarts": 5, "seconds": 10, "maxBackoffMs": 1]],
                "supervisor: unknown key 'maxBackoffMs'; keys: restarts, seconds"
            ),
            (["services": [:]], "services must be a list of services, not {}"),
            (
                ["services": [["name": "a", "executable": "lifeline-push", "args": "--x"]]],
                "services[0].args must be a list of strings, not \"--x\""
            ),
            (
                ["services": [push], "boot": ["tasks": [["name": "a.start", "priorty": 5]]]],
                "boot.tasks[0] (a.start): unknown key 'priorty'; keys: name, service, kind, phase, priority, async, after, condition, deadlineMs, required, runOnce"
            ),
            (
                ["services": [push], "boot": ["phases": ["services", "services"]]],
                "boot.phases names services twice"
            ),
            (
                ["services": [push], "boot": ["phases": ["one", "two"]]],
                "boot.phases must include 'services': each service's start task (NAME.start) runs in it"
            ),
        ]
        for (json, message) in problems {
            #expect(throws: ProtocolError(.badRequest, message)) { try Topology(json: json) }
        }
        #expect(throws: Never.self) {
            try Topology(json: [
                "broker": ["control": "tcp://*:7300", "bus": "ipc:///tmp/bus"], "services": [push],
            ])
        }
    }
}
