import Lifeline
import LifelineProtocol
import LifelineSupport

/// Each fast path beside the general path it stands for, on the hot path's usual input: whether
/// the shortcut still pays for itself (docs/ARCHITECTURE.md section 10 lists them and the tests
/// that compare their results). Rows are measured in alternating rounds and the best of each kept,
/// so that a slow moment of the machine lands on both sides alike.
enum FastPaths {
    struct Row {
        let path: String
        let general: String
        let fast: Double
        let slow: Double
    }

    private struct Pair {
        let path: String
        let general: String
        let fast: () throws -> Void
        let slow: () throws -> Void
    }

    /// Times every pair (`rounds` alternating rounds of `iterations` each side).
    /// - Throws: what a measured step throws (none does on this input).
    static func run(iterations: Int, rounds: Int = 3) throws -> [Row] {
        try pairs().map { pair in
            var (fast, slow) = (Double.infinity, Double.infinity)
            for _ in 0..<rounds {
                fast = min(fast, try Micro.measure(pair.path, iterations: iterations, pair.fast).1)
                slow = min(slow, try Micro.measure(pair.general, iterations: iterations, pair.slow).1)
            }
            return Row(path: pair.path, general: pair.general, fast: fast, slow: slow)
        }
    }

    /// The rows as a table: each side's nanoseconds and how many times the general path costs.
    static func table(_ rows: [Row]) -> String {
        var lines = ["     fast  general  general/fast  path  (general path)"]
        for row in rows {
            lines.append(
                String(
                    format: "%9.0f %8.0f %10.2fx     %@  (%@)", row.fast, row.slow, row.slow / row.fast,
                    row.path, row.general))
        }
        return lines.joined(separator: "\n")
    }

    private static func pairs() throws -> [Pair] {
        let payload = Payload.json(key: 123_456, size: 64)
        let typed = try JSONBytesDecoder.decode(TypedN1.self, from: payload)
        let receipt = PublishReceipt(
            event: "bench.n1", sequence: 1_234_567, epoch: 1_796_022_761_636_622_627, subscribers: 1,
            lifecycle: .active)
        let receiptBody = receipt.body
        let publishFrames = ControlRequest(
            .publish, requestID: Array("k42".utf8), header: ["event": "bench.n1"], payload: payload
        ).frames()
        let callFrames = ClientRequest.call(
            ServiceCall(service: "bench-0", method: "echo", timeoutMilliseconds: 5000, body: payload)
        ).frames(id: Array("c42".utf8))
        var cache = RequestHeaderCache()
        for frames in [publishFrames, callFrames] {
            guard case .request(let request) = try ControlMessage.decode(frames[...]) else {
                throw LifelineError(.internalError, "the bench's request did not decode")
            }
            cache.remember(frames[...], request: request, decoded: try ClientRequest.decode(request))
        }
        // What a request costs a reader that does not remember its header.
        func decodeRequest(_ frames: [[UInt8]]) throws {
            guard case .request(let request) = try ControlMessage.decode(frames[...]) else { return }
            _ = try ClientRequest.decode(request)
        }
        guard cache.match(publishFrames[...]) != nil, cache.match(callFrames[...]) != nil else {
            throw LifelineError(.internalError, "the header cache did not take the bench's requests")
        }
        let arguments = Array(#"{"_0":2,"to":3}"#.utf8)
        return [
            Pair(
                path: "JSONValidator: a 64 B payload is a JSON object", general: "JSONParser.parse",
                fast: { _ = try JSONValidator.topLevelType(of: payload) },
                slow: { _ = try JSONParser.parse(payload) }),
            Pair(
                path: "JSONFieldReader: one member of a 64 B payload", general: "parse, then the member",
                fast: { _ = JSONFieldReader.value(of: "p", in: payload) },
                slow: {
                    guard case .object(let members) = try JSONParser.parse(payload) else { return }
                    _ = members["p"]
                }),
            Pair(
                path: "JSONBytesDecoder: a typed 64 B payload", general: "parse, then JSONValueDecoder",
                fast: { _ = try JSONBytesDecoder.decode(TypedN1.self, from: payload) },
                slow: { _ = try JSONValueDecoder.decode(TypedN1.self, from: try JSONParser.parse(payload)) }),
            Pair(
                path: "JSONBytesEncoder: a typed 64 B payload", general: "JSONValueEncoder, then JSONWriter",
                fast: { _ = try JSONBytesEncoder.encode(typed) },
                slow: { _ = JSONWriter.encode(try JSONValueEncoder.encode(typed)) }),
            Pair(
                path: "JSONDocument: a distributed func's two arguments",
                general: "parse, then JSONValueDecoder per member",
                fast: {
                    let document = try JSONDocument(text: arguments)
                    guard case .object(let members) = document.root else { return }
                    _ = try document.decode(Int.self, at: members["_0"]!)
                    _ = try document.decode(Int.self, at: members["to"]!)
                },
                slow: {
                    guard case .object(let members) = try JSONParser.parse(arguments) else { return }
                    _ = try JSONValueDecoder.decode(Int.self, from: members["_0"]!)
                    _ = try JSONValueDecoder.decode(Int.self, from: members["to"]!)
                }),
            Pair(
                path: "PublishReceipt.body: the usual receipt at its exact length",
                general: "the record's declaration (HeaderWriter)",
                fast: { _ = receipt.body }, slow: { _ = receipt.bytes }),
            Pair(
                path: "PublishReceipt(body:): the usual receipt read in place",
                general: "the record's declaration (HeaderReader)",
                fast: { _ = try PublishReceipt(body: receiptBody) },
                slow: { _ = try PublishReceipt(bytes: receiptBody) }),
            Pair(
                path: "RequestHeaderCache: a repeated PUBLISH header", general: "decode the request",
                fast: { _ = cache.match(publishFrames[...]) }, slow: { try decodeRequest(publishFrames) }),
            Pair(
                path: "RequestHeaderCache: a repeated CALL header", general: "decode the request",
                fast: { _ = cache.match(callFrames[...]) }, slow: { try decodeRequest(callFrames) }),
            Pair(
                path: "Answer from a typed value's text", general: "the value as a tree, then the answer",
                fast: {
                    _ = Answer(.return, text: try JSONBytesEncoder.encode(typed), completionText: nil).body
                },
                slow: { _ = Answer(.return, payload: try JSONValueEncoder.encode(typed)).body }),
        ]
    }
}
