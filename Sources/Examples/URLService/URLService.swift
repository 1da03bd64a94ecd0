import Foundation
import Lifeline

/// lifeline-url's service, made here so that a test can run it against LifelineTesting's in-memory
/// broker (`Tests/ExampleTests`).
enum URLService {
    /// The routing table: a URL's host (or an activity / shortcut type) names the micro-app to open.
    static let routes: [String: String] = [
        "transfer": "TransferApp", "topup": "TopUpApp", "scan": "ScannerApp", "home": "HomeApp",
        "login": "LoginApp",
    ]

    /// Where `url` leads, or nil.
    static func route(for url: String) -> String? {
        guard let components = URLComponents(string: url), let host = components.host else { return nil }
        return routes[host.lowercased()]
    }

    /// `#sequence` for bus events, `dispatch #id` for dispatched ones.
    static func label(_ event: Event) -> String {
        event.dispatchID.map { "dispatch #\($0)" } ?? "#\(event.sequence)"
    }

    /// The service, with a history of its own.
    static func make() -> Service {
        let history = History()
        return Service("url")
            .bootTask("loadRoutes", async: true) { _ in try await Task.sleep(for: .milliseconds(100)) }
            // Dispatched: a URL with a route is handled here (YES); others go on to the next handler.
            .handle(Lifecycle.OpenURL.self, priority: 10) { open, event in
                let target = Self.route(for: open.url)
                await history.add(["url": .string(open.url), "route": target.map { .string($0) } ?? .null])
                print("openURL \(Self.label(event)) \(open.url) -> \(target ?? "no route")")
                return target == nil ? .continue : .returnYES
            }
            .handle(Lifecycle.ContinueUserActivity.self) { activity, event in
                let target = Self.routes[activity.activityType]
                print(
                    "continueUserActivity \(Self.label(event)) \(activity.activityType) -> \(target ?? "no route")"
                )
                return target == nil ? .continue : .returnYES
            }
            .handle(Lifecycle.PerformActionForShortcutItem.self) { item, event in
                let target = Self.routes[item.type]
                print(
                    "performActionForShortcutItem \(Self.label(event)) \(item.type) -> \(target ?? "no route")"
                )
                return try .completed(with: target != nil)
            }
            .method("resolve", summary: "the route an app URL opens") {
                (request: Resolve, _) async throws -> Route in
                guard let target = Self.route(for: request.url) else {
                    throw ServiceError(
                        .notFound, "no route for \(request.url)",
                        details: ["known": .array(Self.routes.keys.sorted().map { .string($0) })])
                }
                return Route(url: request.url, route: target)
            }
            .method("history", summary: "the URLs opened so far, oldest first", reply: "[string]") { _ in
                .array(await history.entries)
            }
    }
}

/// What `resolve` takes: the URL to route.
struct Resolve: Codable, Sendable {
    var url: String
}

/// What `resolve` answers: the URL and the micro-app it opens.
struct Route: Codable, Sendable, Equatable {
    var url: String
    var route: String
}

/// The last URLs seen, newest last.
actor History {
    var entries: [JSONValue] = []
    func add(_ entry: JSONValue) {
        entries.append(entry)
        if entries.count > 50 { entries.removeFirst() }
    }
}
