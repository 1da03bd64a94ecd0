import Lifeline

/// What the push service remembers between events.
actor PushState {
    var deviceToken: String?
    var lastError: String?
    var received: [JSONValue] = []

    func register(token: String) { deviceToken = token; lastError = nil }
    func fail(_ error: String) { lastError = error }
    func receive(_ notification: JSONValue) { received.append(notification) }
    var status: PushStatus {
        PushStatus(deviceToken: deviceToken, lastError: lastError, notifications: received.count)
    }
}

/// What `status` answers.
struct PushStatus: Codable, Sendable, Equatable {
    var deviceToken: String?
    var lastError: String?
    var notifications: Int
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
            .on(Lifecycle.DidRegisterForRemoteNotifications.self) { registered, event in
                await state.register(token: registered.deviceToken)
                print(
                    "didRegisterForRemoteNotifications #\(event.sequence) token=\(registered.deviceToken)"
                )
            }
            .on(Lifecycle.DidFailToRegisterForRemoteNotifications.self) { failure, event in
                await state.fail(failure.error)
                print(
                    "didFailToRegisterForRemoteNotifications #\(event.sequence) \(event.payload)")
            }
            // A remote notification carries a fetch completion: this service says it got new data.
            .handle(Lifecycle.DidReceiveRemoteNotification.self) { notification, event in
                await state.receive(notification.userInfo)
                print(
                    "didReceiveRemoteNotification \(event.dispatchID.map { "dispatch #\($0)" } ?? "#\(event.sequence)") \(event.payload)"
                )
                return .completed("newData")
            }
            .on(Lifecycle.DidReceiveLocalNotification.self) { local, event in
                await state.receive(local.notification)
                print("didReceiveLocalNotification #\(event.sequence) \(event.payload)")
            }
            .on(Lifecycle.HandleActionForLocalNotification.self) { _, event in
                print("handleActionForLocalNotification #\(event.sequence) \(event.payload)")
            }
            .method(
                "status", summary: "the device token, the last registration error and the notifications seen"
            ) {
                _ in await state.status
            }
    }
}
