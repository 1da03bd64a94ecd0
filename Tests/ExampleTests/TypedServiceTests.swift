import Lifeline
import LifelineTesting
import Synchronization
import Testing

/// Typed events and calls: Codable values in, Codable values out, and what does not decode is named.
@Suite("Typed services: Codable events and calls", .timeLimit(.minutes(1)))
struct TypedServiceTests {
    struct CartDidChange: LifelineEvent, Equatable {
        static let name: EventName = "com.example.cart.didChange"
        var items: Int
        var coupon: String?
    }

    struct Resolve: Codable, Sendable { var url: String }
    struct Route: Codable, Equatable { var route: String; var parameters: [String: String] }

    final class Seen: Sendable {
        let values = Mutex<[(CartDidChange, UInt64)]>([])
    }

    @Test(
        "a typed handler gets the decoded value and the event's metadata; typed publish and publish(contentsOf:) publish values"
    )
    func typedEvents() async throws {
        let seen = Seen()
        let service = Service("cart")
            .on(CartDidChange.self) { change, event in
                seen.values.withLock { $0.append((change, event.sequence)) }
                try await event.context.client.publish(CartDidChange(items: change.items + 1))
            }
            .on(Lifecycle.DidBecomeActive.self) { _, event in
                try await event.context.client.publish(contentsOf: [
                    CartDidChange(items: 4), CartDidChange(items: 5),
                ])
            }
        let host = try await ServiceTestHost(service)
        let sequence = try await host.publish(CartDidChange(items: 2, coupon: "X"))
        let values = seen.values.withLock { $0 }
        #expect(
            values.count == 1 && values[0].0 == CartDidChange(items: 2, coupon: "X")
                && values[0].1 == sequence)
        #expect(host.published.last?.event == CartDidChange.name.rawValue)
        #expect(host.published.last?.payload == ["items": 3], "a nil optional is left out")
        try await host.publish(Lifecycle.DidBecomeActive())
        #expect(host.published.suffix(2).map(\.payload) == [["items": 4], ["items": 5]])
        try await host.stop()
    }

    @Test("a payload that does not decode never reaches the handler; the failure names the coding path")
    func undecodable() async throws {
        let seen = Seen()
        let service = Service("cart").on(CartDidChange.self) { change, event in
            seen.values.withLock { $0.append((change, event.sequence)) }
        }
        let host = try await ServiceTestHost(service)
        await #expect {
            try await host.publish(CartDidChange.name, ["items": "two"])
        } throws: { error in
            (error as? ServiceTestHost.HandlerFailure)?.message
                == "cannot decode CartDidChange at items: expected an integer, found a string (\"two\")"
        }
        await #expect(throws: ServiceTestHost.HandlerFailure.self) {
            try await host.publish(CartDidChange.name, ["coupon": "X"])
        }
        #expect(seen.values.withLock { $0.isEmpty })
        try await host.publish(CartDidChange(items: 1))
        #expect(seen.values.withLock { $0.count } == 1, "the service goes on")
        try await host.stop()
    }

    @Test("a dispatched typed event may continue with a rewritten typed value; an undecodable one is a 400")
    func typedDispatch() async throws {
        let service = Service("router")
            .handle(Lifecycle.OpenURL.self) { open, _ in
                guard open.url.hasPrefix("http:") else { return .continue }
                return try .continue(rewriting: Lifecycle.OpenURL(url: "https:" + open.url.dropFirst(5)))
            }
        let host = try await ServiceTestHost(service)
        let answer = try await host.dispatch(Lifecycle.OpenURL(url: "http://x", sourceApplication: "mail"))
        #expect(answer.result == "continue")
        #expect(answer.payload == ["url": "https://x"])
        await #expect {
            try await host.dispatch(.openURL, ["url": 7])
        } throws: { error in
            let error = error as? LifelineError
            return error?.status == .badRequest
                && error?.message.contains(
                    "cannot decode OpenURL at url: expected a string, found a number (7)")
                    == true
        }
        try await host.stop()
    }

    @Test("a typed method decodes its arguments and encodes its reply; a bad body is 400 naming the path")
    func typedCalls() async throws {
        let service = Service("url")
            .method("resolve") { (request: Resolve, _) async throws -> Route in
                Route(
                    route: request.url.hasPrefix("app://") ? "App" : "Web", parameters: ["url": request.url])
            }
        let host = try await ServiceTestHost(service)
        let route = try await host.call("resolve", Resolve(url: "app://top"), returning: Route.self)
        #expect(route == Route(route: "App", parameters: ["url": "app://top"]))
        await #expect {
            try await host.call("resolve", ["link": "x"])
        } throws: { error in
            let error = error as? LifelineError
            return error?.status == .badRequest
                && error?.message == "resolve: cannot decode Resolve at url: missing"
        }
        await #expect(throws: PayloadDecodingError.self) {
            try await host.call("resolve", Resolve(url: "x"), returning: [Int].self)
        }
        try await host.stop()
    }
}
