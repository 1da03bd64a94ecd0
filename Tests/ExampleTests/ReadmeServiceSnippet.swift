// swift-format-ignore-file
// Kept as the README writes it: ReadmeCodeTests compares the two line by line.
import Lifeline

/// The README's "Writing a service" code, line for line (`ReadmeCodeTests` holds the two to each
/// other), compiled with the tests. Its top-level code is the body of ``main()``.
enum ReadmeServiceSnippet {
    // README begin
    struct CartDidChange: LifelineEvent {              // a custom event
        static let name: EventName = "com.example.cart.didChange"
        var items: Int
        var coupon: String?
    }
    struct Resolve: Codable, Sendable { var url: String }
    struct Route: Codable { var url: String; var route: String }

    actor Tokens { var last: String?; func set(_ t: String) { last = t } }
    static func main() async {
    let tokens = Tokens()

    await Service("push")
        .on(Lifecycle.DidRegisterForRemoteNotifications.self) { registered, event in
            await tokens.set(registered.deviceToken)     // event: sequence, epoch, publishedAt, context
        }
        .on(CartDidChange.self) { change, event in event.context.log("\(change.items) items") }
        .handle(Lifecycle.OpenURL.self, priority: 10) { open, _ in   // answer a dispatched event
            open.url.hasPrefix("push:") ? .returnYES : .continue
        }
        .method("resolve") { (request: Resolve, call) async throws -> Route in
            Route(url: request.url, route: "PushApp")
        }
        .didCreate { /* after the first registration, before any event or call is handled */ }
        .start { context in /* when the broker starts the service (its boot task) */ }
        .willDestroy { context in /* at SIGTERM, before unregistering */ }
        .main()
    // README end
    }
}
