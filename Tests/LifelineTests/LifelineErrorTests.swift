import LifelineCLI
import LifelineProtocol
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
