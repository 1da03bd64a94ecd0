import Testing

@testable import LifelineCLI
@testable import LifelineProtocol

@Suite("The boot timeline's SVG", .timeLimit(.minutes(1)))
struct BootTimelineTests {
    @Test("before any boot it says so, with nothing drawn as boot #0")
    func noBootYet() {
        let svg = BootTimeline.svg(["boot": 0, "state": "none", "tasks": [], "launchOptions": .null])
        #expect(svg.contains("No boot has run yet"))
        #expect(!svg.contains("Boot #0") && !svg.contains("null"))
    }

    @Test("launch options are named only when there are some")
    func launchOptions() {
        let task: JSONValue = [
            "name": "push.start", "service": "push", "phase": "main", "startMs": 0, "durationMs": 5,
        ]
        let plain = BootTimeline.svg(["boot": 1, "state": "done", "durationMs": 5, "tasks": [task]])
        #expect(plain.contains("Boot #1: done in 5 ms") && !plain.contains("launch options"))
        let given = BootTimeline.svg([
            "boot": 2, "state": "done", "durationMs": 5, "tasks": [task], "launchOptions": ["url": "x"],
        ])
        #expect(given.contains("launch options {"))
    }
}
