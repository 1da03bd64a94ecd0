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
}
