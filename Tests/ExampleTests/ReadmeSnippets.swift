import GatewayAPI
import Lifeline

/// The README's code for a program that is no service, compiled with the tests (not run: it needs a
/// broker), so that it cannot drift from the API.
enum ReadmeSnippets {
    struct CartDidChange: LifelineEvent {
        static let name: EventName = "com.example.cart.didChange"
        var items: Int
    }

    static func clientProgram() async throws {
        let client = LifelineClient(broker: "tcp://127.0.0.1:7200")  // default: $LIFELINE_BROKER
        try await client.publish(CartDidChange(items: 3))
        let route = try await client.call(
            "url", "resolve", ["url": "app://topup"], returning: [String: String].self)
        let system = LifelineActorSystem(client: client, errors: [SignInRefused.self])
        let gateway = try $SignInGateway.resolve(id: "gateway", using: system)
        _ = (route, gateway)
        await client.close()
    }
}
