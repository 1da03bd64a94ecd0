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

    @Test(
        "publishes to an address nobody listens on fail with the same sentence as calls, not after their time-outs (40 s each here, twice the test's limit for the three): an acknowledged one, a plain one, a post's flush"
    )
    func publishesFailToo() async throws {
        let endpoint = "tcp://127.0.0.1:\(try EtcdProcess.freePort())"
        let client = LifelineClient(broker: endpoint, credentials: nil)
        let started = ContinuousClock.now
        for acknowledged in [true, false] {
            do {
                _ = try await client.publish(
                    "com.example.x", ["k": 1], acknowledged: acknowledged, timeout: .seconds(40))
                Issue.record("the publish succeeded")
            } catch let error as LifelineError {
                #expect(error.code == .unavailable)
                #expect(error.message.hasPrefix("no broker answered at \(endpoint)"), "\(error.message)")
            }
        }
        await client.post("com.example.x", ["k": 2], timeout: .seconds(40))
        do {
            try await client.flush()
            Issue.record("the flush succeeded")
        } catch {
            #expect("\(error)".contains("no broker answered at \(endpoint)"), "\(error)")
        }
        await client.close()
        print(
            "SDK: two publishes, a post's flush and the close ended \(ContinuousClock.now - started) after the start"
        )
    }

    @Test(
        "a blocking client that was told there is no broker is answered once one starts at its address (the console's feed threads keep one client)"
    )
    func brokerStartsLater() async throws {
        let endpoint = "tcp://127.0.0.1:\(try EtcdProcess.freePort())"
        let client = try blockingClient(broker: endpoint)
        #expect(throws: LifelineError.self) { _ = try client.send(.hello, timeout: .seconds(2)) }
        #expect(throws: LifelineError.self) { _ = try client.send(.hello, timeout: .seconds(2)) }
        let broker = try await BrokerProcess(control: endpoint)
        defer { broker.process.kill() }
        var answered = false
        let deadline = ContinuousClock.now + .seconds(20)
        while !answered, ContinuousClock.now < deadline {
            answered = (try? client.send(.hello, timeout: .seconds(2)))?.status == .ok
            if !answered { try await Task.sleep(for: .milliseconds(50)) }  // polling with a deadline
        }
        #expect(answered, "the same client is answered by the broker that started")
    }

    @Test(
        "clients closed while their broker is gone and their requests wait leave the process's ZeroMQ working: a client of another broker is answered throughout"
    )
    func closedWhileBrokerGone() async throws {
        let doomed = try await BrokerProcess()
        var clients: [LifelineClient] = []
        for _ in 0..<4 {
            let client = LifelineClient(broker: doomed.control, credentials: nil)
            _ = try await client.services()  // connected
            clients.append(client)
        }
        doomed.process.kill(SIGKILL)
        _ = try await doomed.process.waitForExit()
        // Each has a request the dead broker will never answer queued on its socket, which lingers
        // after the close and tries to reconnect: its monitor must be stopped by then.
        let waiting = clients.map { client in Task { try? await client.call("x", "y", timeout: .seconds(30)) }
        }
        for client in clients { await client.close() }
        for request in waiting { _ = await request.value }

        let broker = try await BrokerProcess()
        defer { broker.process.kill() }
        let client = LifelineClient(broker: broker.control, credentials: nil)
        // A second's worth of requests, paced: the closed sockets linger and retry in that time.
        for _ in 0..<10 {
            _ = try await client.services()
            try await Task.sleep(for: .milliseconds(100))
        }
        await client.close()
    }

    @Test(
        "a broker killed while it holds calls: the SDK's call and the CLI's fail with what happened once the link closes, not after their 30 s time-outs"
    )
    func brokerGoneWithCalls() async throws {
        let broker = try await BrokerProcess()
        let service = try await broker.service("lifeline-probe", ["--name", "slow", "--replicable"])
        defer { service.kill(); broker.process.kill() }
        let client = LifelineClient(broker: broker.control, credentials: nil)
        let call = Task { try await client.call("slow", "sleep", ["ms": 600_000], timeout: .seconds(30)) }
        let cli = Task {
            try await CLIResult.run(
                ["call", "slow", "sleep", "ms:=600000", "--timeout", "30s", "--broker", broker.control],
                seconds: 60)
        }
        // Readiness: the broker has forwarded both calls to the service.
        let deadline = ContinuousClock.now + .seconds(20)
        while true {
            let lookup = try await broker.cli(["lookup", "slow", "--json"])
            let inFlight = (try? JSONParser.parse(lookup.output))?["instances"]?.arrayValue?.first?[
                "inFlight"]
            if inFlight == 2 { break }
            guard ContinuousClock.now < deadline else {
                Issue.record("the calls never reached the service: \(lookup.output) \(lookup.errors)")
                return
            }
            try await Task.sleep(for: .milliseconds(50))  // polling with a deadline
        }
        let killed = ContinuousClock.now
        broker.process.kill(SIGKILL)
        do {
            _ = try await call.value
            Issue.record("the call was answered")
        } catch let error as LifelineError {
            #expect(error.code == .unavailable)
            #expect(error.message == "the connection to the broker was lost before it answered CALL")
        }
        let sdk = ContinuousClock.now - killed
        let result = try await cli.value
        #expect(result.status == 1)
        #expect(
            result.errors.contains("the connection to the broker was lost before it answered CALL"),
            "\(result.errors)")
        let both = ContinuousClock.now - killed
        print("after the kill: the SDK's call failed in \(sdk), the CLI's in \(both)")
        #expect(both < .seconds(25), "well before the 30 s time-outs")
        await client.close()
    }
}
