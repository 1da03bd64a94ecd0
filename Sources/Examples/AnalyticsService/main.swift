// lifeline-analytics: counts application lifecycle transitions and time spent in the foreground.
import Foundation
import Lifeline

/// Counters of the analytics service.
actor Analytics {
    var counts: [String: Int64] = [:]
    var activeSince: Date?
    var foreground: TimeInterval = 0

    func record(_ event: Event) {
        counts[event.name.rawValue, default: 0] += 1
        switch event.name {
        case .didBecomeActive: activeSince = event.publishedAt
        case .willResignActive, .didEnterBackground, .willTerminate:
            if let since = activeSince, event.publishedAt > since {
                foreground += event.publishedAt.timeIntervalSince(since)
            }
            activeSince = nil
        default: break
        }
    }

    func reset() { counts = [:]; activeSince = nil; foreground = 0 }

    /// A background fetch uploads the counters: new data if anything was counted since the last one.
    var uploaded = 0
    func fetch() -> String {
        let total = counts.values.reduce(0, +)
        defer { uploaded = Int(total) }
        return Int(total) > uploaded ? "newData" : "noData"
    }

    var stats: JSONValue {
        [
            "counts": .object(counts.mapValues { .int($0) }),
            "foregroundMs": .int(Int64(foreground * 1000)),
            "active": .bool(activeSince != nil),
        ]
    }
}

/// An app-defined analytics event: what the app wants counted.
struct Track: LifelineEvent {
    static let name: EventName = "analytics.track"
    /// What happened (`checkout`, `share`, …).
    var name: String
    /// How much of it, when it has a measure (items in a checkout).
    var value: Double?
    /// Anything more the app says of it.
    var properties: JSONValue?
}

let analytics = Analytics()
let tracked: [EventName] = [
    .didFinishLaunching, .didBecomeActive, .willResignActive, .didEnterBackground, .willEnterForeground,
    .willTerminate,
    .didReceiveMemoryWarning,
]

var service = Service("analytics")
for name in tracked {
    service = service.on(name) { event in
        await analytics.record(event)
        print("\(event.name) #\(event.sequence) \(event.payload)")
    }
}
await service
    .on(Track.self) { track, event in
        await analytics.record(event)
        print(
            "\(Track.name) #\(event.sequence) \(track.name)\(track.value.map { " \($0)" } ?? "")")
    }
    // Boot: started after the gateway; an asynchronous group (cache and backlog) runs concurrently.
    .startTask(after: ["gateway.start"])
    .bootTask("warmCache", phase: "autostart", async: true) { _ in
        try await Task.sleep(for: .milliseconds(300))
    }
    .bootTask("uploadBacklog", phase: "autostart", async: true) { _ in
        try await Task.sleep(for: .milliseconds(250))
    }
    .handle(.performFetch) { event in
        let result = await analytics.fetch()
        print("performFetch dispatch #\(event.dispatchID ?? 0) -> \(result)")
        return .completed(.string(result))
    }
    .describeEvent("analytics.track", summary: "an app-defined analytics event it counts")
    .method(
        "stats", summary: "events counted so far, by name",
        reply: #"{"active": boolean, "counts": {…}, "foregroundMs": integer}"#
    ) { _ in
        await analytics.stats
    }
    .method("reset") { _ in
        await analytics.reset()
        return ["reset": true]
    }
    .main(
        about: "Counts lifecycle events (and the custom event analytics.track); 'stats' and 'reset' methods.")
