// The fuzz target of bench/fuzz.sh: compiled with Sources/LifelineProtocol by `swiftc
// -sanitize=fuzzer,address`. An input is a multipart message: frames separated by the bytes
// 00 01 00. Every decoder a peer's bytes reach is run on it; each must return or throw a
// ProtocolError (the clear 4xx the broker answers), never crash, hang or leak.

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzDecoders(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    var frames: [[UInt8]] = [[]]
    var index = 0
    while index < bytes.count {
        if index + 2 < bytes.count, bytes[index] == 0, bytes[index + 1] == 1, bytes[index + 2] == 0 {
            frames.append([])
            index += 3
        } else {
            frames[frames.count - 1].append(bytes[index])
            index += 1
        }
    }
    // The validator, the tape and the parser share one scanner (JSONScanner); the fast paths
    // beside it are checked against the parser here.
    checkOneGrammar(bytes)
    let declared = try? PublishReceipt(bytes: bytes)
    if (try? PublishReceipt(body: bytes)) != declared {
        fatalError("a receipt read in place differs from the parsed one: \(bytes)")
    }
    let parsed = try? JSONParser.parse(bytes)
    checkFieldReader(bytes, parsed)
    checkCoders(bytes)
    if let message = try? ControlMessage.decode(frames[...]) {
        if case .request(let request) = message {
            if let typed = try? ClientRequest.decode(request) {
                checkHeaderCache(frames, request, typed) { try? ClientRequest.decode($0) }
                // What a request's one declaration writes reads back as a request it writes the
                // same way (a number may change form once: 1.0 is written 1).
                let written = typed.frames(id: request.requestID)
                checkHeaderWriter(written)
                guard case .request(let again)? = try? ControlMessage.decode(written[...]),
                    let back = try? ClientRequest.decode(again), back.frames(id: request.requestID) == written
                else { fatalError("a request written from its declaration reads back otherwise: \(frames)") }
            }
            if let typed = try? BrokerRequest.decode(request) {
                // A service remembers the CALLs the broker forwards (as the typed CALL they carry).
                if case .call(let call) = typed {
                    checkHeaderCache(frames, request, .call(call)) { fresh in
                        guard case .call(let call)? = try? BrokerRequest.decode(fresh) else { return nil }
                        return .call(call)
                    }
                }
                let written = typed.frames(id: [])
                checkHeaderWriter(written)
                guard case .request(let again)? = try? ControlMessage.decode(written[...]),
                    let back = try? BrokerRequest.decode(again), back.frames(id: []) == written
                else {
                    fatalError(
                        "a broker request written from its declaration reads back otherwise: \(frames)")
                }
            }
        }
        if case .reply(let reply) = message { _ = try? reply.json() }
    }
    _ = try? BusMessage.decodeBatch(frames)
    return 0
}

/// The validator, the tape and the parser accept the same texts and refuse the others with the same
/// offset and reason.
private func checkOneGrammar(_ bytes: [UInt8]) {
    func refusal(_ read: () throws -> Void) -> String? {
        do {
            try read()
            return nil
        } catch { return "\(error)" }
    }
    let validator = refusal { _ = try JSONValidator.topLevelType(of: bytes) }
    let parser = refusal { _ = try JSONParser.parse(bytes) }
    let tape = refusal { _ = try JSONTape(bytes) }
    precondition(
        validator == parser && tape == parser,
        "the readers of one grammar disagree (\(validator ?? "ok"), \(parser ?? "ok"), \(tape ?? "ok")): \(bytes)"
    )
}

/// A member read in place must be the parsed object's (or say it cannot be read so): `k`, and each
/// name the object has (a few of them).
private func checkFieldReader(_ bytes: [UInt8], _ parsed: JSONValue?) {
    guard case .object(let members)? = parsed else {
        _ = JSONFieldReader.value(of: "k", in: bytes)
        return
    }
    for name in ["k"] + members.keys.prefix(8) {
        switch JSONFieldReader.value(of: name, in: bytes) {
        case .none: precondition(members[name] == nil, "the field reader missed \(name): \(bytes)")
        case .some(.some(let value)):
            precondition(value == members[name], "the field reader read another value of \(name): \(bytes)")
        case .some(.none): break
        }
    }
}

/// A remembered header must give back exactly what decoding gave, for the message itself and for
/// the same header with another payload.
private func checkHeaderCache(
    _ frames: [[UInt8]], _ request: ControlRequest, _ typed: ClientRequest,
    decode: (ControlRequest) -> ClientRequest?
) {
    var cache = RequestHeaderCache()
    cache.remember(frames[...], request: request, decoded: typed)
    if let (id, repeated) = cache.match(frames[...]) {
        precondition(id == request.requestID && repeated == typed, "the cache changed a request")
    }
    // The same header with another payload, without one, with another id or version: a hit must
    // be what a fresh decode of those frames gives.
    var variants: [[[UInt8]]] = []
    if frames.count >= 4 {
        variants.append(Array(frames.prefix(4)) + [Array("{\"other\":1}".utf8)])
        variants.append(Array(frames.prefix(4)))
        for length in [10, 300] {
            var id = frames
            id[2] = Array(repeating: UInt8(ascii: "i"), count: length)
            variants.append(id)
        }
        var version = frames
        version[0] = Array("LLC02".utf8)
        variants.append(version)
    }
    for variant in variants {
        guard let (id, repeated) = cache.match(variant[...]) else { continue }
        guard case .request(let fresh)? = try? ControlMessage.decode(variant[...]),
            let decoded = decode(fresh)
        else { preconditionFailure("the cache took frames a fresh decode refuses") }
        precondition(id == fresh.requestID && repeated == decoded, "the cache changed a request")
    }
}

/// Members of the usual kinds, so that the fuzzer's texts reach every decoding and writing step of
/// the typed coders: scalars, optionals, nesting, arrays, dictionaries and untyped members.
private struct FuzzShape: Codable, Equatable {
    var k: Int64?
    var q: Int?
    var small: UInt8?
    var p: String?
    var x: Double?
    var b: Bool?
    var rows: [FuzzShape]?
    var tags: [String: Int32]?
    var any: JSONValue?
    var byNumber: [Int: String]?
    var kind: Kind?
    var kelvin: Int?
    var cafe: String?

    enum CodingKeys: String, CodingKey {
        case k, q, small, p, x, b, rows, tags, any, byNumber, kind
        case kelvin = "\u{212A}"
        case cafe = "caf\u{E9}"
    }

    enum Kind: String, Codable { case one, two }
}

/// What a decoder or writer gave: a value, or the words of its error.
private enum Outcome<T: Equatable>: Equatable {
    case value(T)
    case failure(String)

    init(_ work: () throws -> T) {
        do { self = .value(try work()) } catch { self = .failure("\(error)") }
    }
}

/// The tape decoder gives what the tree decoder gives (the value, or the same error), and the
/// typed writer writes what the tree's encoder and writer write (the text, or the same refusal).
private func checkCoders(_ bytes: [UInt8]) {
    let tape = Outcome { try JSONBytesDecoder.decode(FuzzShape.self, from: bytes) }
    guard let document = bytes.isEmpty ? JSONValue.null : try? JSONParser.parse(bytes) else {
        guard case .failure(let reason) = tape, reason.contains("not JSON") else {
            preconditionFailure("the tape decoder read a text the parser refuses: \(bytes)")
        }
        return
    }
    let tree = Outcome { try JSONValueDecoder.decode(FuzzShape.self, from: document) }
    precondition(tape == tree, "the tape decoder and the tree decoder disagree (\(tape), \(tree)): \(bytes)")
    guard case .value(let value) = tape else { return }
    // The typed writer keeps the type's member order, the tree's writer sorts: compared as parsed.
    let direct = Outcome { JSONWriter.encode(try JSONParser.parse(try JSONBytesEncoder.encode(value))) }
    let general = Outcome { JSONWriter.encode(try JSONValueEncoder.encode(value)) }
    precondition(
        direct == general, "the typed writer and the tree's writer disagree (\(direct), \(general)): \(bytes)"
    )
}

/// A request's header, however it was written, is what the tree's writer makes of it.
private func checkHeaderWriter(_ frames: [[UInt8]]) {
    guard frames.count > 3, !frames[3].isEmpty else { return }
    guard let tree = try? JSONParser.parse(frames[3]), JSONWriter.encode(tree) == frames[3] else {
        preconditionFailure("a header written directly is not what the tree's writer writes: \(frames[3])")
    }
}
