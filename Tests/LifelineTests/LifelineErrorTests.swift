import LifelineCLI
import LifelineProtocol
import TestSupport
import Testing

@testable import Lifeline

@Suite("LifelineError: a code to switch on", .timeLimit(.minutes(1)))
struct LifelineErrorTests {
    @Test("each status maps to its kind; a service's own status stays as failed(status)")
    func codes() {
        let cases: [(Status, LifelineError.Code)] = [
            (.notFound, .notFound), (.timeout, .timeout), (.unavailable, .unavailable),
            (.forbidden, .forbidden), (.conflict, .conflict), (.badRequest, .invalid),
            (.payloadTooLarge, .invalid), (.unprocessable, .invalid), (.versionNotSupported, .invalid),
            (.tooMany, .limited), (.internalError, .failed(.internalError)),
            (Status(rawValue: 418), .failed(Status(rawValue: 418))),
        ]
        for (status, code) in cases {
            #expect(LifelineError(status, "x").code == code, "\(status)")
        }
    }

    @Test(
        "a service error's body names each member once, as the tree's writer would, the message as its error")
    func serviceErrorBody() throws {
        var error = ServiceError(
            .conflict, "taken", details: ["value": 1, "error": "shadowed", "owner": "ana"])
        error.detailTexts["value"] = Array(#"{"code":7}"#.utf8)
        let expected: JSONValue = ["error": "taken", "owner": "ana", "value": ["code": 7]]
        #expect(error.body == JSONWriter.encode(expected))
        #expect(try JSONParser.parse(error.body) == expected)
    }

    @Test("property, seeded: a service error's body is what the tree's writer writes of the same members")
    func serviceErrorBodies() throws {
        var generator = SeededGenerator()
        let names = ["error", "value", "owner", "a\"b", "caf\u{E9}", "cafe\u{301}", "Z", "\u{212A}", "k", ""]
        let values: [JSONValue] = [1, "x\n", ["code": 7], [1, "two"], .null, true, -2.5]
        for round in 0..<2_000 {
            var details: [String: JSONValue] = [:]
            for name in names.shuffled(using: &generator).prefix(Int.random(in: 0...4, using: &generator)) {
                details[name] = values.randomElement(using: &generator)!
            }
            var error = ServiceError(.conflict, names.randomElement(using: &generator)!, details: details)
            var tree = details
            for name in names.shuffled(using: &generator).prefix(Int.random(in: 0...2, using: &generator)) {
                let value = values.randomElement(using: &generator)!
                error.detailTexts[name] = JSONWriter.encode(value)
                tree[name] = value
            }
            tree["error"] = .string(error.message)
            #expect(
                error.body == JSONWriter.encode(.object(tree)),
                "round \(round): \(String(decoding: error.body, as: UTF8.self)); \(generator.replay)")
            if error.body != JSONWriter.encode(.object(tree)) { return }
        }
    }

    @Test("a client that cannot reach the broker fails with a code, not a socket error")
    func unreachable() throws {
        #expect(throws: LifelineError.self) { try BlockingClient(broker: "not an endpoint") }
        let client = try BlockingClient(broker: "tcp://127.0.0.1:1", credentials: nil)
        do {
            _ = try client.hello(timeout: .milliseconds(200))
            Issue.record("nothing listens there")
        } catch let error as LifelineError {
            #expect(error.code == .timeout || error.code == .unavailable)
        }
    }
}
