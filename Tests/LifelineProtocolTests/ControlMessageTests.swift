import TestSupport
import Testing

@testable import LifelineProtocol

@Suite("Control and bus frames", .timeLimit(.minutes(1)))
struct ControlMessageTests {
    let id = Array("42".utf8)

    @Test("a request and a reply survive encoding")
    func roundTrip() throws {
        let request = ControlRequest(
            .call, requestID: id, header: ["service": "push", "method": "status"], payload: Array("{}".utf8))
        #expect(try ControlMessage.decode(request.frames()[...]) == .request(request))
        let reply = ControlReply(requestID: id, status: .notFound, json: ["error": "no service named x"])
        #expect(try ControlMessage.decode(reply.frames()[...]) == .reply(reply))
        #expect(reply.errorMessage == "no service named x")
    }

    @Test(
        "malformed messages are refused with the exact reason",
        arguments: [
            ([], 400, "empty message"),
            (
                [[0xFF, 0x00]], 400,
                "not a Lifeline message: the first frame must be 'LLC01', got 2 bytes 0xff00"
            ),
            (
                [Array("LLC02".utf8), Array("HELLO".utf8), Array("7".utf8), []], 505,
                "protocol version 'LLC02' is not supported; this peer speaks LLC01"
            ),
            ([Array("LLC01".utf8)], 400, "missing the command frame"),
            (
                [Array("LLC01".utf8), Array("FROB".utf8), Array("7".utf8)], 400,
                "unknown command 'FROB'; known commands: "
                    + Command.all.map(\.rawValue).joined(separator: ", ")
            ),
            ([Array("LLC01".utf8), Array("LOOKUP".utf8)], 400, "LOOKUP is missing the request-id frame"),
            (
                [Array("LLC01".utf8), Array("LOOKUP".utf8), Array("7".utf8)], 400,
                "LOOKUP has 4 frames (LLC01, LOOKUP, id, header), got 3"
            ),
            (
                [Array("LLC01".utf8), Array("LOOKUP".utf8), Array("7".utf8), [], []], 400,
                "LOOKUP has 4 frames (LLC01, LOOKUP, id, header), got 5"
            ),
            (
                [Array("LLC01".utf8), Array("LOOKUP".utf8), Array("7".utf8), Array("{x".utf8)], 400,
                "LOOKUP header is not JSON: invalid JSON at byte 1: expected a string key"
            ),
            (
                [Array("LLC01".utf8), Array("LOOKUP".utf8), Array("7".utf8), Array("[1]".utf8)], 400,
                "LOOKUP header must be a JSON object, not array"
            ),
            (
                [Array("LLC01".utf8), Array("REPLY".utf8), Array("7".utf8), Array("2x0".utf8), []], 400,
                "REPLY status must be three digits from 100 to 999, got '2x0'"
            ),
        ] as [([[UInt8]], Int, String)])
    func malformed(frames: [[UInt8]], status: Int, message: String) {
        let error = #expect(throws: ProtocolError.self) { try ControlMessage.decode(frames[...]) }
        #expect(error?.status.rawValue == status)
        #expect(error?.message == message)
    }

    @Test("errors keep the request id when there is one, so they can be matched")
    func requestIDKept() {
        let frames = [Array("LLC01".utf8), Array("FROB".utf8), id, []]
        let error = #expect(throws: ProtocolError.self) { try ControlMessage.decode(frames[...]) }
        #expect(error?.requestID == id)
    }

    @Test(
        "a message that is not Lifeline's is refused with frame 2 echoed as the request id when it could be one",
        arguments: [
            ([[0xFF, 0x00], Array("HELLO".utf8), Array("42".utf8), []], Array("42".utf8)),
            ([Array("ZMTP1".utf8), Array("HELLO".utf8), Array("42".utf8)], Array("42".utf8)),
            ([[0xFF, 0x00], Array("HELLO".utf8)], []),
            ([[0xFF, 0x00], Array("HELLO".utf8), [UInt8](repeating: 7, count: 256), []], []),
        ] as [([[UInt8]], [UInt8])])
    func notLifelineEchoesRequestID(frames: [[UInt8]], echoed: [UInt8]) {
        let error = #expect(throws: ProtocolError.self) { try ControlMessage.decode(frames[...]) }
        #expect(error?.status == .badRequest)
        #expect(error?.message.hasPrefix("not a Lifeline message") == true)
        #expect(error?.requestID == echoed)
    }

    @Test(
        "property, seeded: random frames either decode to a message that encodes back to itself, or are refused with a 4xx (505 for another version)"
    )
    func decodeProperty() {
        var generator = SeededGenerator()
        for round in 0..<5000 {
            var frames: [[UInt8]] = (0..<Int.random(in: 0...6, using: &generator)).map { _ in
                (0..<Int.random(in: 0...12, using: &generator)).map { _ in
                    UInt8.random(in: 0...255, using: &generator)
                }
            }
            if Bool.random(using: &generator) && !frames.isEmpty { frames[0] = Array("LLC01".utf8) }
            if Bool.random(using: &generator) && frames.count > 1 {
                frames[1] = Array(Command.all.randomElement(using: &generator)!.rawValue.utf8)
            }
            if Bool.random(using: &generator) && frames.count > 3 { frames[3] = Array(#"{"name":"x"}"#.utf8) }
            do {
                let message = try ControlMessage.decode(frames[...])
                let encoded: [[UInt8]]
                switch message {
                case .request(let request): encoded = request.frames()
                case .reply(let reply): encoded = reply.frames()
                }
                let again = try? ControlMessage.decode(encoded[...])
                #expect(again == message, "round \(round): \(frames); \(generator.replay)")
                if again != message { return }
            } catch {
                let status = error.status.rawValue
                #expect(
                    (400..<500).contains(status) || status == 505,
                    "round \(round): \(frames) → \(error); \(generator.replay)")
                if !(400..<500).contains(status) && status != 505 { return }
            }
        }
    }

    @Test("a bus message keeps its header and its exact-match topic")
    func busRoundTrip() throws {
        let header = BusHeader(
            epoch: 0xDEAD_BEEF_0000_0001, sequence: 7, topicSequence: 3, flags: 1,
            publishedWallNanoseconds: 1_700_000_000_000_000_000,
            publishedMonotonicNanoseconds: 123)
        let message = BusMessage(name: .openURL, header: header, payload: Array(#"{"url":"x"}"#.utf8))
        let frames = message.frames()
        #expect(frames[0] == Array("openURL\u{0}".utf8))
        #expect(frames[2].count == BusHeader.size)
        #expect(try BusMessage.decode(frames) == message)
        #expect(throws: ProtocolError.self) { try BusMessage.decode([frames[0], frames[1], [1, 2]]) }
        #expect(throws: ProtocolError.self) {
            try BusMessage.decode([Array("openURL".utf8), frames[1], frames[2], frames[3]])
        }
    }

    @Test("a registration is checked field by field")
    func registration() throws {
        let registration = ServiceRegistration(
            name: "push", instance: "abc", pid: 12, host: "h", events: [.openURL], methods: ["status"],
            attachToken: "t")
        #expect(try ServiceRegistration(json: registration.json) == registration)
        var bad = registration.json.objectValue!
        bad["events"] = ["didEnterBackgroun"]
        #expect(throws: ProtocolError.self) { try ServiceRegistration(json: .object(bad)) }
        bad = registration.json.objectValue!
        bad["heartbeat"] = ["intervalMs": 1, "liveness": 3]
        let error = #expect(throws: ProtocolError.self) { try ServiceRegistration(json: .object(bad)) }
        #expect(error?.message == "REGISTER 'heartbeat' intervalMs must be an integer within 10...600000")
        bad = registration.json.objectValue!
        bad["name"] = "a/b"
        #expect(throws: ProtocolError.self) { try ServiceRegistration(json: .object(bad)) }
    }
}

@Suite("Bus messages of several events")
struct BusBatchTests {
    private static func message(_ sequence: UInt64, _ payload: String) -> BusMessage {
        BusMessage(
            name: "app.tick",
            header: BusHeader(
                epoch: 7, sequence: sequence, topicSequence: sequence, publishedWallNanoseconds: 1,
                publishedMonotonicNanoseconds: 2), payload: Array(payload.utf8))
    }

    @Test(
        "a batch is [topic, LLB01, headers, length-prefixed payloads] and decodes back in order; one event is the classic message"
    )
    func roundTrip() throws {
        let messages = (1...3).map { Self.message(UInt64($0), "{\"n\":\($0)}") }
        let frames = BusMessage.frames(batch: messages)
        #expect(frames.count == 4 && frames[2].count == 3 * BusHeader.size)
        #expect(frames[3] == (1...3).flatMap { [0, 0, 0, 7] + Array("{\"n\":\($0)}".utf8) })
        #expect(try BusMessage.decodeBatch(frames) == messages)
        let single = BusMessage.frames(batch: [messages[0]])
        #expect(single == messages[0].frames())
        #expect(try BusMessage.decode(single) == messages[0])
    }

    @Test("payloads that do not match the headers are refused, saying how")
    func mismatch() {
        let frames = BusMessage.frames(batch: (1...3).map { Self.message(UInt64($0), "{}") })
        func error(_ payloads: [UInt8], headers: [UInt8]? = nil) -> String? {
            let bad = [frames[0], frames[1], headers ?? frames[2], payloads]
            return (#expect(throws: ProtocolError.self) { try BusMessage.decodeBatch(bad) })?.message
        }
        #expect(error(Array(frames[3].dropLast(6))) == "bus payloads frame ends before payload 3 of 3")
        #expect(error(Array(frames[3].dropLast())) == "payload 3 of 3 is longer than the bus payloads frame")
        #expect(error(frames[3] + [1]) == "bus payloads frame has 1 bytes after its 3 payloads")
        #expect(
            error(frames[3], headers: Array(frames[2].dropLast()))
                == "bus headers must be a multiple of 48 bytes, got 143")
        #expect(throws: ProtocolError.self) { try BusMessage.decode(frames) }
        let extra = #expect(throws: ProtocolError.self) { try BusMessage.decodeBatch(frames + [[]]) }
        #expect(extra?.message == "a bus message has 4 frames (topic, LLB01, headers, payloads), got 5")
    }

    @Test("frames read in place decode to the events, or say what is wrong")
    func inPlace() throws {
        func decode(_ frames: [[UInt8]]) -> Result<[BusMessage], ProtocolError> {
            frames[0].withUnsafeBytes { topic in
                frames[1].withUnsafeBytes { version in
                    frames[2].withUnsafeBytes { headers in
                        frames[3].withUnsafeBytes { payloads in
                            Result { () throws(ProtocolError) in
                                try BusMessage.decodeBatch(
                                    topic: topic, protocolID: version, headers: headers, payloads: payloads)
                            }
                        }
                    }
                }
            }
        }
        let one = [Self.message(1, "{}")]
        let three = (1...3).map { Self.message(UInt64($0), "{\"n\":\($0)}") }
        #expect(try decode(BusMessage.frames(batch: one)).get() == one)
        #expect(try decode(BusMessage.frames(batch: three)).get() == three)
        var frames = BusMessage.frames(batch: one)
        frames[1] = Array("LLB02".utf8)
        #expect(
            decode(frames)
                == .failure(ProtocolError(.versionNotSupported, "bus protocol 'LLB02' is not LLB01")))
        frames = BusMessage.frames(batch: one)
        frames[0] = Array("app.tick".utf8)
        #expect(decode(frames) == .failure(ProtocolError(.badRequest, "bus topic must end with a NUL byte")))
        frames = BusMessage.frames(batch: one)
        frames[2] = []
        #expect(
            decode(frames)
                == .failure(ProtocolError(.badRequest, "bus headers must be a multiple of 48 bytes, got 0")))
    }

    @Test("a status compares with its number: error.status == 404 reads as it should")
    func statusLiteral() {
        let status: Status = .notFound
        #expect(status == 404)
        #expect(ControlReply.error(.badRequest, "no", requestID: []).status == 400)
        #expect(Status.ok != 500)
    }
}
