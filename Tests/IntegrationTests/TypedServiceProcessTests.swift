import Foundation
import Lifeline
import LifelineProtocol
import Testing

@Suite("Typed events and calls between real processes", .serialized, .timeLimit(.minutes(1)))
struct TypedServiceProcessTests {
    @Test(
        "a payload that does not decode is logged with its path, counted in stats, and answered to an acknowledged publish; the service goes on"
    )
    func undecodable() async throws {
        let broker = try await BrokerProcess()
        defer { broker.process.kill() }
        let analytics = try await broker.service("lifeline-analytics")
        defer { analytics.kill() }
        let bad = try await broker.cli(["publish", "analytics.track", "name:=5", "--ack"])
        #expect(bad.status == 1)
        #expect(
            bad.errors.contains(
                "analytics handled it with an error: cannot decode Track at name: expected a string, found a number (5)"
            ), "\(bad.errors)")
        let logged = try await analytics.waitForLine(.stderr) { $0.contains("handler for analytics.track") }
        #expect(logged.contains("failed: cannot decode Track at name: expected a string, found a number (5)"))
        let good = try await broker.cli(["publish", "analytics.track", "name=checkout", "--ack"])
        #expect(good.status == 0, "the service goes on: \(good.errors)")
        try await analytics.waitForLine { $0.contains("analytics.track") && $0.hasSuffix("checkout") }
        // The count arrives with the service's next heartbeat (every second).
        var undecodable: Int64?
        var handled: Int64?
        // A bound for a loaded machine, not a window: the loop ends as soon as both counts are in.
        let deadline = ContinuousClock.now + .seconds(30)
        while (undecodable != 1 || handled != 1) && ContinuousClock.now < deadline {
            let stats = try await broker.cli(["stats", "analytics", "--json"])
            let record = try JSONParser.parse(stats.output)["services"]?["analytics"] ?? .null
            undecodable = record["undecodable"]?.intValue
            handled = record["handled"]?["analytics.track"]?.intValue
            // Polling with a deadline: the counts come with heartbeats.
            if undecodable != 1 || handled != 1 { try await Task.sleep(for: .milliseconds(100)) }
        }
        #expect(undecodable == 1)
        #expect(handled == 1, "the handler ran once: the undecodable event is not counted as handled")
        let table = try await broker.cli(["stats", "analytics"])
        #expect(
            table.stdout.contains {
                $0.hasPrefix("SERVICE") && $0.hasSuffix("FAILED  QUEUED  DROPPED  UNDECODABLE")
            })
        let record = try JSONParser.parse(try await broker.cli(["stats", "analytics", "--json"]).output)
        #expect(
            record["services"]?["analytics"]?["failed"] == 0,
            "an undecodable event is not a handler's failure")
    }

    @Test(
        "describe shows a typed event's fields and a typed method's shapes from the types; a bad body is 400")
    func describeAndBadBody() async throws {
        let broker = try await BrokerProcess()
        defer { broker.process.kill() }
        let analytics = try await broker.service("lifeline-analytics")
        let url = try await broker.service("lifeline-url")
        defer { for child in [analytics, url] { child.kill() } }
        let described = try await broker.cli(["describe", "analytics"])
        #expect(
            described.stdout.contains {
                $0.contains("analytics.track (handles) — an app-defined analytics event it counts")
                    && $0.contains("name: string") && $0.contains("properties: any?")
            }, "\(described.stdout)")
        let push = try await broker.service("lifeline-push")
        defer { push.kill() }
        let status = try await broker.cli(["describe", "push"])
        #expect(
            status.stdout.contains {
                $0.contains(#"status — "#)
                    && $0.contains(
                        #"answers {"deviceToken"?: string, "lastError"?: string, "notifications": integer}"#)
            }, "\(status.stdout)")
        let call = try await broker.cli(["call", "url", "resolve", #"{"link": 1}"#])
        #expect(call.status == 1)
        #expect(call.errors.contains("resolve: cannot decode Resolve at url: missing"), "\(call.errors)")
    }

    @Test(
        "key=value on the CLI takes the declared type: an event's number field as its service describes it, a method's integer argument; a value not of that type, or a required field left out, is refused naming the field"
    )
    func typedKeyValue() async throws {
        let broker = try await BrokerProcess()
        defer { broker.process.kill() }
        let analytics = try await broker.service("lifeline-analytics")
        let gateway = try await broker.service("lifeline-gateway")
        defer { for child in [analytics, gateway] { child.kill() } }
        let good = try await broker.cli(["publish", "analytics.track", "name=checkout", "value=3", "--ack"])
        #expect(good.status == 0, "\(good.errors)")
        try await analytics.waitForLine { $0.contains("analytics.track") && $0.hasSuffix("checkout 3.0") }
        let bad = try await broker.cli(["publish", "analytics.track", "name=checkout", "value=three"])
        #expect(bad.status == 2)
        #expect(
            bad.errors.contains("event analytics.track: field 'value' is a number; 'three' is not one"),
            "\(bad.errors)")
        let call = try await broker.cli(["call", "gateway", "waitForSignIn", "seconds=0"])
        #expect(call.status == 0, "\(call.errors)")
        #expect(try JSONParser.parse(call.output)["signedIn"] == false)
        let wrong = try await broker.cli(["call", "gateway", "waitForSignIn", "seconds=1.5"])
        #expect(wrong.status == 2)
        #expect(
            wrong.errors.contains("gateway.waitForSignIn: field 'seconds' is an integer; '1.5' is not one"),
            "\(wrong.errors)")
        let unnamed = try await broker.cli(["publish", "analytics.track", "value=3"])
        #expect(unnamed.status == 2)
        #expect(
            unnamed.errors.contains(
                "event analytics.track needs the field 'name' (string): give it as name=…"),
            "\(unnamed.errors)")
        let empty = try await broker.cli(["publish", "analytics.track"])
        #expect(empty.status == 2, "\(empty.output)")
        #expect(
            empty.errors.contains("event analytics.track needs the field 'name' (string)"), "\(empty.errors)")
        let missing = try await broker.cli(["call", "gateway", "waitForSignIn", "wait=1"])
        #expect(missing.status == 2)
        #expect(
            missing.errors.contains(
                "gateway.waitForSignIn needs the field 'seconds' (integer): give it as seconds=…"),
            "\(missing.errors)")
    }
}
