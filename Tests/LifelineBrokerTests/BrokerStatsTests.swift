import Testing

@testable import LifelineBroker

@Suite("BrokerStats: counts of services that left are kept for the last 100 names only")
struct BrokerStatsTests {
    @Test(
        "a name that left keeps its counts until 100 others have left after it; one that came back keeps them"
    )
    func departedNamesAreBounded() {
        var stats = BrokerStats()
        for index in 0..<150 {
            stats.recordCall(
                service: "churn-\(index)", method: "m", nanoseconds: 1_000, success: true, timedOut: false)
            stats.dispatchSteps["churn-\(index)", default: 0] += 1
        }
        stats.recordCall(service: "steady", method: "m", nanoseconds: 1_000, success: true, timedOut: false)
        stats.serviceLeft("churn-0")
        stats.serviceJoined("churn-0")
        for index in 1..<150 { stats.serviceLeft("churn-\(index)") }
        #expect(stats.calls.count == 102, "the last 100 that left, one that came back, one that never left")
        #expect(stats.calls["churn-0"] != nil && stats.calls["steady"] != nil)
        #expect(stats.calls["churn-49"] == nil && stats.dispatchSteps["churn-49"] == nil)
        #expect(stats.calls["churn-50"]?["m"]?.requests == 1 && stats.dispatchSteps["churn-50"] == 1)
        #expect(stats.departed.count == BrokerStats.keptDeparted)
    }
}
