import Lifeline

/// What the push service remembers between events.
actor PushState {
    var deviceToken: String?
    var lastError: String?
    var received: [JSONValue] = []

    func register(token: String) { deviceToken = token; lastError = nil }
    func fail(_ error: String) { lastError = error }
    func receive(_ notification: JSONValue) { received.append(notification) }
    var status: JSONValue {
        [
            "deviceToken": deviceToken.map { .string($0) } ?? .null,
            "lastError": lastError.map { .string($0) } ?? .null,
            "notifications": .int(Int64(received.count)),
        ]
    }
}

/// lifeline-push's service, made here so that a test can run it against LifelineTesting's in-memory
/// broker (`Tests/ExampleTests`).
enum PushService {
    /// The service, with a state of its own.
    static func make() -> Service {
        let state = PushState()
        return Service("push")
            // Boot: registering with APNs only when the app was launched by a remote notification.
            .bootTask(
                "registerAPNs", async: true, after: ["gateway.start"],
                when: .launchOption("remoteNotification")
            ) { _ in
                try await Task.sleep(for: .milliseconds(150))
            }
            .startTask(after: ["gateway.start"])
            .on(.didRegisterForRemoteNotifications) { event in
                let token = event["deviceToken"]?.stringValue ?? ""
                await state.register(token: token)
                Console.out("push: didRegisterForRemoteNotifications #\(event.sequence) token=\(token)")
            }
            .on(.didFailToRegisterForRemoteNotifications) { event in
                await state.fail(event["error"]?.stringValue ?? "unknown")
                Console.out(
                    "push: didFailToRegisterForRemoteNotifications #\(event.sequence) \(event.payload)")
            }
            // A remote notification carries a fetch completion: this service says it got new data.
            .handle(.didReceiveRemoteNotification) { event in
                await state.receive(event["userInfo"] ?? .null)
                Console.out(
                    "push: didReceiveRemoteNotification \(event.dispatchID.map { "dispatch #\($0)" } ?? "#\(event.sequence)") \(event.payload)"
                )
                return .completed("newData")
            }
            .on(.didReceiveLocalNotification) { event in
                await state.receive(event["notification"] ?? .null)
                Console.out("push: didReceiveLocalNotification #\(event.sequence) \(event.payload)")
            }
            .on(.handleActionForLocalNotification) { event in
                Console.out("push: handleActionForLocalNotification #\(event.sequence) \(event.payload)")
            }
            .method("status") { _ in await state.status }
    }
}
