import LifelineProtocol
import Testing

@testable import LifelineBroker

@Suite(
    "A repeated PUBLISH or CALL header is decoded once; a repeat says exactly what a first decode would",
    .timeLimit(.minutes(1)))
struct RequestHeaderCacheTests {
    private static func frames(
        _ header: String, payload: String?, id: String = "p1", version: String = "LLC01",
        command: String = "PUBLISH"
    ) -> [[UInt8]] {
        [Array(version.utf8), Array(command.utf8), Array(id.utf8), Array(header.utf8)]
            + (payload.map { [Array($0.utf8)] } ?? [])
    }

    /// A broker that has taken one PUBLISH of `header` (so the header is remembered).
    private static func primed(_ header: String) -> BrokerHarness {
        var broker = BrokerHarness()
        let first = broker.raw("cli", frames(header, payload: "{}"))
        #expect(first?.status == .ok)
        return broker
    }

    private static func payloads(_ broker: BrokerHarness) -> [String] {
        broker.published.map { String(decoding: $0.payload, as: UTF8.self) }
    }

    @Test("repeats of one header publish each payload, with its own request id")
    func repeatsCarryTheirPayload() throws {
        var broker = BrokerHarness()
        broker.register("push", peer: "svc", events: ["app.tick"])
        for index in 0..<3 {
            let answer = broker.raw(
                "cli", Self.frames(#"{"event":"app.tick"}"#, payload: "{\"n\":\(index)}", id: "p\(index)"))
            let reply = try #require(answer)
            #expect(reply.status == .ok && reply.requestID == Array("p\(index)".utf8))
            #expect(Self.payloads(broker) == ["{\"n\":\(index)}"])
            #expect(try PublishReceipt(json: reply.json()).subscribers == 1)
        }
    }

    @Test("a name is taken as checked only when its bytes repeat: text equal as Unicode is checked again")
    func nameCheckSkippedOnlyForTheSameBytes() throws {
        var broker = Self.primed(#"{"event":"app.K"}"#)
        // The Kelvin sign equals "K" under String's ==; the naming rule refuses it.
        let kelvin = broker.raw("cli", Self.frames("{\"event\":\"app.\u{212A}\"}", payload: "{}", id: "p2"))
        let reply = try #require(kelvin)
        #expect(reply.status == .badRequest)
        #expect(reply.errorMessage.contains("must start with a letter"))
        #expect(broker.published.isEmpty)
        let again = broker.raw("cli", Self.frames(#"{"event":"app.K"}"#, payload: "{}", id: "p3"))
        #expect(again?.status == .ok)
    }

    @Test("a repeated header still has its payload checked")
    func payloadCheckedOnRepeat() throws {
        let header = #"{"event":"app.tick"}"#
        var broker = Self.primed(header)
        let array = broker.raw("cli", Self.frames(header, payload: "[1]"))
        let reply = try #require(array)
        #expect(reply.status == .unprocessable)
        #expect(reply.errorMessage == "the payload of app.tick must be a JSON object, not array")
        let broken = broker.raw("cli", Self.frames(header, payload: "{"))
        #expect(broken?.status == .badRequest)
        #expect(broker.published.isEmpty)
    }

    @Test("the other frames of a repeat are checked as on a first decode")
    func framesCheckedOnRepeat() throws {
        let header = #"{"event":"app.tick"}"#
        var broker = Self.primed(header)
        let version = broker.raw("cli", Self.frames(header, payload: "{}", version: "LLC02"))
        #expect(version?.status == .versionNotSupported)
        let longID = String(repeating: "x", count: ControlRequest.maximumRequestIDLength + 1)
        let answer = broker.raw("cli", Self.frames(header, payload: "{}", id: longID))
        let tooLong = try #require(answer)
        #expect(tooLong.status == .badRequest)
        #expect(tooLong.errorMessage == "request id longer than 255 bytes")
        #expect(broker.published.isEmpty)
        let noPayload = broker.raw("cli", Self.frames(header, payload: nil))
        #expect(noPayload?.status == .ok)
        #expect(Self.payloads(broker) == ["{}"])
    }

    @Test("a batch header is never taken for a single event")
    func batchNotRemembered() throws {
        var broker = BrokerHarness()
        let header = #"{"event":"app.tick","count":2}"#
        let packed = String(
            decoding: PackedPayloads.frame([Array("{}".utf8), Array("{\"n\":1}".utf8)]), as: UTF8.self)
        for _ in 0..<2 {
            let answer = broker.raw("cli", Self.frames(header, payload: packed))
            let reply = try #require(answer)
            let receipt = try PublishReceipt(json: reply.json())
            #expect(reply.status == .ok && receipt.count == 2)
            #expect(Self.payloads(broker) == ["{}", "{\"n\":1}"])
        }
        let single = broker.raw("cli", Self.frames(#"{"event":"app.tick"}"#, payload: "{}"))
        #expect(single?.status == .ok)
        let answer = broker.raw("cli", Self.frames(header, payload: packed))
        let reply = try #require(answer)
        let receipt = try PublishReceipt(json: reply.json())
        #expect(receipt.count == 2)
    }

    @Test("the cache follows the header: a new one is decoded, its options kept")
    func newHeaderDecoded() throws {
        var broker = BrokerHarness()
        let first = broker.raw("cli", Self.frames(#"{"event":"app.a"}"#, payload: "{}"))
        #expect(first?.status == .ok)
        for _ in 0..<2 {
            let silent = broker.raw("cli", Self.frames(#"{"event":"app.b","reply":false}"#, payload: "{}"))
            #expect(silent == nil)
            #expect(broker.published.map(\.name) == ["app.b"])
        }
        let answer = broker.raw("cli", Self.frames(#"{"event":"app.a"}"#, payload: "{}"))
        let reply = try #require(answer)
        let receipt = try PublishReceipt(json: reply.json())
        #expect(receipt.event == "app.a")
    }

    @Test("repeated CALL headers forward each body; a missing method is refused every time")
    func repeatedCalls() throws {
        var broker = BrokerHarness()
        broker.register("url", peer: "svc", methods: ["resolve"])
        let header = #"{"method":"resolve","service":"url"}"#
        for index in 0..<2 {
            broker.raw(
                "cli", Self.frames(header, payload: "{\"n\":\(index)}", id: "c\(index)", command: "CALL"))
            let forwarded = try #require(broker.requests(to: "svc").last)
            #expect(forwarded.command == .call && forwarded.payload == Array("{\"n\":\(index)}".utf8))
            #expect(forwarded.header == ["method": "resolve", "service": "url", "timeoutMs": 5000])
            broker.raw(
                "svc", ControlReply(requestID: forwarded.requestID, json: ["n": .int(Int64(index))]).frames())
            let answer = try #require(broker.replies(to: "cli").last)
            let body = try answer.json()
            #expect(answer.requestID == Array("c\(index)".utf8) && body == ["n": .int(Int64(index))])
        }
        let missing = #"{"method":"nope","service":"url"}"#
        for _ in 0..<2 {
            let answer = broker.raw("cli", Self.frames(missing, payload: nil, command: "CALL"))
            #expect(answer?.status == .notFound)
            #expect(answer?.errorMessage == "service 'url' has no method 'nope'; it answers: resolve")
        }
    }
}
