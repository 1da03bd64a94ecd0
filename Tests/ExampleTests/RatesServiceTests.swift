import Foundation
import Lifeline
import LifelineProtocol
import LifelineTesting
import Testing

@testable import lifeline_rates

@Suite("lifeline-rates against LifelineTesting's in-memory broker", .timeLimit(.minutes(1)))
struct RatesServiceTests {
    @Test(
        "convert answers the amount and the process that answered; an unknown currency is 404 naming the known"
    )
    func convert() async throws {
        let host = try await ServiceTestHost(RatesService.make())
        let converted = try await host.call(
            "convert", Conversion(amount: 100, from: "usd", to: "EUR"), returning: Converted.self)
        #expect(converted.amount == 92 && converted.servedBy == Int(getpid()))
        do {
            _ = try await host.call("convert", ["amount": 1, "from": "USD", "to": "XYZ"])
            Issue.record("an unknown currency is refused")
        } catch let error as LifelineError {
            #expect(error.status == .notFound && error.message == "no rate for USD to XYZ")
            #expect(error.body["known"] == ["CNY", "EUR", "GBP", "JPY", "USD"])
        }
        try await host.stop()
    }

    @Test("it registers as replicable, convert as idempotent")
    func registration() async throws {
        let host = try await ServiceTestHost(RatesService.make())
        let registration = try #require(host.registration)
        #expect(registration.replicable && registration.idempotent == ["convert"])
        try await host.stop()
    }
}
