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
            .handle(.openURL, priority: 10) { event in
                let url = event["url"]?.stringValue ?? ""
                let target = Self.route(for: url)
                await history.add(["url": .string(url), "route": target.map { .string($0) } ?? .null])
                Console.out("url: openURL \(Self.label(event)) \(url) -> \(target ?? "no route")")
                return target == nil ? .continue : .returnYES
            }
            .handle(.continueUserActivity) { event in
                let type = event["activityType"]?.stringValue ?? ""
                Console.out(
                    "url: continueUserActivity \(Self.label(event)) \(type) -> \(Self.routes[type] ?? "no route")"
                )
                return Self.routes[type] == nil ? .continue : .returnYES
            }
            .handle(.performActionForShortcutItem) { event in
                let type = event["type"]?.stringValue ?? ""
                Console.out(
                    "url: performActionForShortcutItem \(Self.label(event)) \(type) -> \(Self.routes[type] ?? "no route")"
                )
                return .completed(.bool(Self.routes[type] != nil))
            }
            .method(
                "resolve", summary: "the route an app URL opens", arguments: #"{"url": string}"#,
                reply: #"{"url": string, "route": string}"#
            ) { request in
                guard let url = request.body["url"]?.stringValue else {
                    throw ServiceError(.badRequest, "resolve needs {\"url\": \"scheme://host/...\"}")
                }
                guard let target = Self.route(for: url) else {
                    throw ServiceError(
                        .notFound, "no route for \(url)",
                        details: ["known": .array(Self.routes.keys.sorted().map { .string($0) })])
                }
                return ["url": .string(url), "route": .string(target)]
            }
            .method("history", summary: "the URLs opened so far, oldest first", reply: "[string]") { _ in
                .array(await history.entries)
            }
    }
}

/// The last URLs seen, newest last.
actor History {
    var entries: [JSONValue] = []
    func add(_ entry: JSONValue) {
        entries.append(entry)
        if entries.count > 50 { entries.removeFirst() }
    }
}
