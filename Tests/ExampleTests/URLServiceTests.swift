import Lifeline
import LifelineProtocol
import LifelineTesting
import Testing

@testable import lifeline_url

@Suite("lifeline-url against LifelineTesting's in-memory broker", .timeLimit(.minutes(1)))
struct URLServiceTests {
    @Test("resolve answers a known URL's route, and 404 naming the known hosts otherwise")
    func resolve() async throws {
        let host = try await ServiceTestHost(URLService.make())
        let route = try await host.call("resolve", ["url": "app://topup/amount"])
        #expect(route == ["url": "app://topup/amount", "route": "TopUpApp"])
        let typed = try await host.call("resolve", Resolve(url: "app://scan"), returning: Route.self)
        #expect(typed == Route(url: "app://scan", route: "ScannerApp"))
        do {
            _ = try await host.call("resolve", ["url": "app://nowhere"])
            Issue.record("an unknown host is refused")
        } catch let error as LifelineError {
            #expect(error.status == .notFound && error.message == "no route for app://nowhere")
        }
        try await host.stop()
    }

    @Test(
        "a dispatched openURL is answered YES when it has a route and continue otherwise; history keeps both")
    func openURL() async throws {
        let host = try await ServiceTestHost(URLService.make())
        #expect(try await host.dispatch(.openURL, ["url": "app://transfer"]).result == "returnYES")
        #expect(try await host.dispatch(.openURL, ["url": "app://nowhere"]).result == "continue")
        let history = try await host.call("history")
        #expect(
            history == [
                ["url": "app://transfer", "route": "TransferApp"], ["url": "app://nowhere", "route": .null],
            ])
        let shortcut = try await host.dispatch(.performActionForShortcutItem, ["type": "scan"])
        #expect(shortcut.completion == true)
        #expect(try await host.runBootTask("loadRoutes") == ["outcome": "done"])
        try await host.stop()
    }
}
