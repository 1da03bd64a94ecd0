import LifelineSupport
import Testing

@Suite("The supervisor's restart bookkeeping, with an injected clock")
struct RestartTrackerTests {
    @Test(
        "backoff doubles from 250 ms to at most 8 s, resets after a long run, and gives up past the intensity"
    )
    func backoffAndIntensity() {
        var tracker = RestartTracker(limit: 5, windowSeconds: 10, jitter: { 1.0 })
        let second: UInt64 = 1_000_000_000
        var now: UInt64 = 100 * second
        var waits: [RestartTracker.Decision] = []
        for _ in 0..<6 {
            waits.append(tracker.exited(at: now, ranNanoseconds: second / 10))
            now += second / 10
        }
        #expect(
            waits == [
                .restart(afterMilliseconds: 250), .restart(afterMilliseconds: 500),
                .restart(afterMilliseconds: 1000),
                .restart(afterMilliseconds: 2000), .restart(afterMilliseconds: 4000), .giveUp(restarts: 5),
            ])
        var calm = RestartTracker(limit: 5, windowSeconds: 10, jitter: { 1.0 })
        for _ in 0..<8 {
            now += 60 * second
            #expect(calm.exited(at: now, ranNanoseconds: 60 * second) == .restart(afterMilliseconds: 250))
        }
        var capped = RestartTracker(limit: 100, windowSeconds: 10, jitter: { 1.2 })
        var last = RestartTracker.Decision.giveUp(restarts: 0)
        for _ in 0..<12 { last = capped.exited(at: now, ranNanoseconds: 0) }
        #expect(last == .restart(afterMilliseconds: 9600), "8 s at most, times the jitter")
    }
}
