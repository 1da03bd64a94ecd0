import Foundation
import Lifeline
import Testing

@Suite("No broker at the address: a clear error, not a wait", .timeLimit(.minutes(1)))
struct NoBrokerTests {
    @Test(
        "a LifelineClient's call and the CLI's call to an address nobody listens on fail with unavailable and a sentence, well before their 5 s time-outs"
    )
    func refusedAddress() async throws {
        let endpoint = "tcp://127.0.0.1:\(try EtcdProcess.freePort())"
        let client = LifelineClient(broker: endpoint, credentials: nil)
        let started = ContinuousClock.now
        do {
            _ = try await client.call("url", "resolve", ["url": "app://x"], timeout: .seconds(5))
            Issue.record("the call succeeded")
        } catch let error as LifelineError {
            #expect(error.code == .unavailable)
            #expect(
                error.message
                    == "no broker answered at \(endpoint): the connection is refused; start one with `lifeline up`"
            )
        }
        print("SDK: no broker said after \(ContinuousClock.now - started)")
        await client.close()
        let cliStarted = ContinuousClock.now
        let cli = try await CLIResult.run(["call", "url", "resolve", "--broker", endpoint])
        #expect(cli.status == 1)
        #expect(cli.errors.contains("no broker answered at \(endpoint)"), "\(cli.errors)")
        print("CLI: no broker said after \(ContinuousClock.now - cliStarted), process start included")
    }
}
