import Lifeline
import LifelineProtocol
import LifelineTesting
import Testing

@testable import lifeline_push

@Suite("lifeline-push against LifelineTesting's in-memory broker", .timeLimit(.minutes(1)))
struct PushServiceTests {
    @Test("a registration event's token shows in status; a remote notification is answered newData")
    func notifications() async throws {
        let host = try await ServiceTestHost(PushService.make())
        try await host.publish(.didRegisterForRemoteNotifications, ["deviceToken": "abc123"])
        #expect(try await host.call("status")["deviceToken"] == "abc123")
        let answer = try await host.dispatch(.didReceiveRemoteNotification, ["userInfo": ["aps": [:]]])
        #expect(answer.completion == "newData")
        #expect(try await host.call("status")["notifications"] == 1)
        try await host.publish(.didFailToRegisterForRemoteNotifications, ["error": "no network"])
        #expect(try await host.call("status")["lastError"] == "no network")
        try await host.stop()
    }

    @Test("registerAPNs runs only when the app was launched by a remote notification")
    func bootCondition() async throws {
        let host = try await ServiceTestHost(PushService.make())
        let skipped = try await host.runBootTask("registerAPNs")
        #expect(skipped["outcome"] == "skipped")
        let done = try await host.runBootTask("registerAPNs", launchOptions: ["remoteNotification": true])
        #expect(done == ["outcome": "done"])
        try await host.stop()
    }
}
