import Foundation
import Lifeline

/// lifeline-rates' service: currency conversion, the same answer from any process, so it runs as
/// several instances (`"replicas": 2` in deploy/topology.json) and every call may be sent again to
/// another instance when the one answering dies. Made here so that a test can run it against
/// LifelineTesting's in-memory broker.
enum RatesService {
    /// Units of each currency per US dollar.
    static let perDollar: [String: Double] = ["USD": 1, "EUR": 0.92, "GBP": 0.79, "JPY": 151.2, "CNY": 7.24]

    /// The service; each answer names the process that gave it.
    static func make() -> Service {
        Service("rates")
            .replicable()
            .method("convert", summary: "an amount in another currency", idempotent: true) {
                (request: Conversion, _) async throws -> Converted in
                guard let from = perDollar[request.from.uppercased()],
                    let to = perDollar[request.to.uppercased()]
                else {
                    throw ServiceError(
                        .notFound, "no rate for \(request.from) to \(request.to)",
                        details: ["known": .array(perDollar.keys.sorted().map { .string($0) })])
                }
                let rate = to / from
                return Converted(
                    amount: (request.amount * rate * 100).rounded() / 100, rate: rate,
                    servedBy: Int(ProcessInfo.processInfo.processIdentifier))
            }
            .on(Lifecycle.DidReceiveMemoryWarning.self) { _, event in
                print("memory warning #\(event.sequence): nothing cached to drop")
            }
    }
}

/// What `convert` takes.
struct Conversion: Codable, Sendable {
    var amount: Double
    var from: String
    var to: String
}

/// What `convert` answers: the amount, the rate used, and the pid of the instance that answered.
struct Converted: Codable, Sendable, Equatable {
    var amount: Double
    var rate: Double
    var servedBy: Int
}
