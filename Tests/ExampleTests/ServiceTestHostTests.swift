import Foundation
import Lifeline
import LifelineProtocol
import LifelineTesting
import Synchronization
import Testing

/// LifelineTesting itself: what a handler throws, the manual clock, what sessions ask of the stack,
/// what handlers publish.
@Suite("ServiceTestHost: a service without processes or sockets", .timeLimit(.minutes(1)))
struct ServiceTestHostTests {
    struct Refused: Error {}

    /// A custom event given a built-in name by mistake.
    struct FakeOpenURL: LifelineEvent {
        static let name: EventName = "openURL"
        var link: Int
    }

    actor Seen {
        var times: [Date] = []
        func add(_ time: Date) { times.append(time) }
    }

    final class Editor: MicroAppDelegate {
        func rootRoute(_ session: AppSession) async -> JSONValue { ["screen": "editor"] }
        func perform(_ session: AppSession, action: String, body: JSONValue) async throws -> JSONValue {
            session.router.push("preview", params: body)
            return ["pushed": "preview"]
        }
    }

    @Test(
        "a handler that throws fails publish; events carry the manual clock's time; publications are recorded"
    )
    func handlersAndClock() async throws {
        let seen = Seen()
        let service = Service("svc")
            .on("app.tick") { event in
                await seen.add(event.publishedAt)
                try await event.context.client.publish("app.tock", ["n": event["n"] ?? .null])
            }
            .on("app.fails") { _ in throw Refused() }
        let host = try await ServiceTestHost(service, wallClock: Date(timeIntervalSince1970: 1000))
        try await host.publish("app.tick", ["n": 1])
        host.advance(by: .seconds(90))
        try await host.publish("app.tick", ["n": 2])
        #expect(await seen.times == [Date(timeIntervalSince1970: 1000), Date(timeIntervalSince1970: 1090)])
        #expect(host.published.map(\.event) == ["app.tock", "app.tock"])
        #expect(host.published.last?.payload == ["n": 2])
        await #expect(throws: ServiceTestHost.HandlerFailure.self) { try await host.publish("app.fails") }
        try await host.stop()
    }

    @Test(
        "what a broker would refuse for good stops the service before it connects, as in a test host: a bad name, an event without a namespace, a method declared twice, a broker address that is none"
    )
    func refusedForGood() async throws {
        func refusal(_ service: Service, name: String? = nil) async -> String? {
            do {
                _ = try await ServiceTestHost(service, name: name)
                return nil
            } catch let error as LifelineError {
                #expect(error.code == .invalid)
                return error.message
            } catch {
                return "\(error)"
            }
        }
        #expect(
            await refusal(Service("bad name!"))
                == "the service name 'bad name!' may contain only letters, digits, '_', '-' and '.'")
        #expect(await refusal(Service("ok"), name: "") == "the service name cannot be empty")
        let unnamespaced = await refusal(Service("odd").on("cartChanged") { _ in })
        #expect(
            unnamespaced?.hasPrefix(
                "'odd' handles unknown event 'cartChanged' (a custom event needs a namespace, e.g. 'com.example.cartChanged'"
            ) == true, "\(unnamespaced ?? "")")
        let fake = await refusal(Service("fake").on(FakeOpenURL.self) { _, _ in })
        #expect(
            fake
                == "FakeOpenURL handles the built-in event openURL, whose fields are 'url', 'sourceApplication', 'annotation': it needs 'link', which that event never carries (a custom event needs a namespace: 'com.example.openURL')",
            "\(fake ?? "")")
        #expect(
            await refusal(Service("twice").on("app.x") { _ in }.onInline("app.x") { _ in })
                == "the event app.x is handled twice; the second handler would replace the first")
        #expect(
            await refusal(Service("twice").method("a") { _ in .null }.method("a") { _ in 1 })
                == "the method 'a' is declared twice; the second would replace the first")
        var options = ServiceRunner.Options()
        options.broker = "127.0.0.1:7200"
        await #expect {
            try await ServiceRunner(Service("addressed"), options: options).run()
        } throws: {
            ($0 as? LifelineError)?.message
                == "the broker's address: expected tcp://HOST:PORT or ipc://PATH, not '127.0.0.1:7200'"
        }
        let client = LifelineClient(broker: "127.0.0.1:7200", credentials: nil)
        await #expect {
            try await client.call("url", "resolve", timeout: .seconds(30))
        } throws: {
            ($0 as? LifelineError)?.message
                == "the broker's address: expected tcp://HOST:PORT or ipc://PATH, not '127.0.0.1:7200'"
        }
        await client.close()
    }

    @Test("a micro-app session is started, performs an action, and its Router's change is recorded")
    func sessions() async throws {
        let service = Service("shell").app("editor", actions: ["open"]) { _ in Editor() }
        let host = try await ServiceTestHost(service)
        let (session, root) = try await host.startSession("editor")
        #expect(root == ["screen": "editor"])
        let answer = try await host.action("open", session: session, app: "editor", body: ["doc": 7])
        #expect(answer == ["pushed": "preview"])
        #expect(host.stackChanges.first?["op"] == "start" && host.stackChanges.first?["app"] == "preview")
        do {
            _ = try await host.action("close", session: session, app: "editor")
            Issue.record("an action the app does not list is refused")
        } catch let error as LifelineError {
            #expect(error.message.contains("open"))
        }
        try await host.stop()
    }

    final class Flag: Sendable {
        private let value = Mutex(false)
        func set() { value.withLock { $0 = true } }
        var isSet: Bool { value.withLock { $0 } }
    }

    @Test("nothing is handled before didCreate has returned; an event nobody handles does not hang publish")
    func didCreateFirst() async throws {
        let created = Flag()
        let service = Service("svc")
            .didCreate {
                // A didCreate that suspends many times: anything running beside it would get ahead.
                for _ in 0..<1000 { await Task.yield() }
                created.set()
            }
            .on("app.tick") { _ in if !created.isSet { throw Refused() } }
        let host = try await ServiceTestHost(service)
        try await host.publish("app.tick")
        try await host.publish("app.unhandled")
        try await host.stop()
    }

    @Test("a service whose start throws makes the host's init throw instead of hanging")
    func failingStart() async throws {
        struct Broken: Error {}
        let service = Service("svc").resume { throw Broken() }
        await #expect(throws: Broken.self) { _ = try await ServiceTestHost(service) }
    }
}
