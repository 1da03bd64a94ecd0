import LifelineProtocol
import Testing

@testable import LifelineBroker

@Suite("The boot's report while it waits, and after a restart that ended it", .timeLimit(.minutes(1)))
struct BootReportTests {
    @Test(
        "a waiting boot reports what it waits for, no time and no tasks; restarted, it is failed 'while waiting for its services', with them"
    )
    func waitingThenRestarted() throws {
        var broker = BrokerHarness {
            $0.stateDirectory = "/state"
            $0.expectedServices = ["e1", "e2"]
        }
        broker.register("e1", peer: "p1", events: [.openURL])
        broker.request("cli", .boot, ["op": "start"])
        var saved: [JSONValue] = []
        for case .persist("boot.json", let document) in broker.output { saved.append(document) }
        let asked = broker.request("cli", .boot, ["op": "report"])
        let report = try #require(asked).json()
        #expect(report["state"] == "waiting" && report["missing"] == ["e2"])
        #expect(report["durationMs"] == 0 && report["tasks"] == [] && report["blame"] == [])
        #expect(report["criticalChain"] == [])

        let state: JSONValue = try #require(saved.last, "boot.json is saved with what the boot waits for")
        var configuration = BrokerConfiguration()
        configuration.stateDirectory = "/state"
        let restarted = Broker(
            configuration: configuration, identity: BrokerIdentity(pid: 2, host: "test", version: "test"),
            busEndpoints: ["tcp://127.0.0.1:9"], monotonic: broker.instant, wall: 1_700_000_100_000_000_000,
            bootState: state)
        broker.core = restarted
        let askedAgain = broker.request("cli", .boot, ["op": "report"])
        let after = try #require(askedAgain).json()
        #expect(after["state"] == "failed" && after["restored"] == true)
        #expect(after["error"] == "the broker stopped while boot #1 was waiting for its services")
        #expect(after["missing"] == ["e2"])
    }

    @Test("a BOOT says how long the broker waits for the task: its deadline (timeoutMs)")
    func bootCarriesTheDeadline() throws {
        var broker = BrokerHarness()
        broker.register("push", peer: "p1", events: [.openURL])
        broker.request("cli", .boot, ["op": "start"])
        let boots = try broker.requests(to: "p1").filter { $0.command == .boot }.map(BrokerRequest.decode)
        #expect(!boots.isEmpty, "push.start went to the service")
        for boot in boots {
            guard case .boot(let run) = boot else { continue }
            #expect(run.timeoutMilliseconds == BootTask.defaultDeadlineMilliseconds, "\(run)")
        }
    }
}
