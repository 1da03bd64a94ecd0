/// The protocol identifiers that open every message.
package enum ProtocolID {
    /// First frame of every control message (DEALER ↔ ROUTER).
    public static let control = "LLC01"
    /// Second frame of every bus message (after the topic).
    public static let bus = "LLB01"

    static let controlBytes = Array(control.utf8)
    static let busBytes = Array(bus.utf8)
    /// ``bus`` as a literal, for the bus decoder: a global array is initialized through `swift_once`
    /// on every use, a literal is not.
    static let busLiteral: StaticString = "LLB01"
    static let replyBytes = Array(Command.reply.rawValue.utf8)
    static let okBytes = Array("200".utf8)
}

/// A request on the control channel: `[LLC01, COMMAND, request-id, header-json, payload?]`.
package struct ControlRequest: Sendable, Equatable {
    /// Longest accepted request id.
    public static let maximumRequestIDLength = 255

    public var command: Command
    public var requestID: [UInt8]
    /// The header, a JSON object with the command's parameters, as read once (``JSONTape``): a
    /// request's fields are read from it one by one (``HeaderFields``), without a tree.
    let document: JSONTape
    /// The opaque payload frame of PUBLISH and CALL (JSON text by convention).
    public var payload: [UInt8]?

    public init(
        _ command: Command, requestID: [UInt8] = [], header: JSONValue = .emptyObject, payload: [UInt8]? = nil
    ) {
        // The writer's own output is JSON.
        self.init(
            command, requestID: requestID, document: try! JSONTape(JSONWriter.encode(header)),
            payload: payload)
    }

    init(_ command: Command, requestID: [UInt8], document: JSONTape, payload: [UInt8]?) {
        self.command = command
        self.requestID = requestID
        self.document = document
        self.payload = payload
    }

    /// A request from frames this peer wrote, its header read once.
    package init(written frames: [[UInt8]]) {
        self.init(
            Command(rawValue: String(decoding: frames[1], as: UTF8.self)), requestID: frames[2],
            document: (try? JSONTape(frames[3])) ?? (try! JSONTape(Array("{}".utf8))),
            payload: frames.count > 4 ? frames[4] : nil)
    }

    /// The header as a tree (for tests and logs; a request's reader does not build it).
    public var header: JSONValue { document.value(at: 0) }

    /// The frames to send (without any routing envelope).
    public func frames() -> [[UInt8]] {
        var frames = [ProtocolID.controlBytes, Array(command.rawValue.utf8), requestID, document.bytes]
        if let payload { frames.append(payload) }
        return frames
    }

    public static func == (left: ControlRequest, right: ControlRequest) -> Bool {
        left.command == right.command && left.requestID == right.requestID && left.payload == right.payload
            && (left.document.bytes == right.document.bytes || left.header == right.header)
    }
}

/// A reply on the control channel: `[LLC01, REPLY, request-id, status, body]`.
package struct ControlReply: Sendable, Equatable {
    public var requestID: [UInt8]
    public var status: Status
    /// JSON text: the result, or `{"error": "..."}` when the status is not 2xx.
    public var body: [UInt8]

    public init(requestID: [UInt8], status: Status, body: [UInt8]) {
        self.requestID = requestID
        self.status = status
        self.body = body
    }

    /// A reply with a JSON body.
    public init(requestID: [UInt8], status: Status = .ok, json: JSONValue) {
        self.init(requestID: requestID, status: status, body: JSONWriter.encode(json))
    }

    /// An error reply whose body is `{"error": message}`.
    public static func error(_ status: Status, _ message: String, requestID: [UInt8]) -> ControlReply {
        ControlReply(requestID: requestID, status: status, body: ErrorReply(message).bytes)
    }

    /// The frames to send (without any routing envelope).
    public func frames() -> [[UInt8]] {
        let statusBytes = status == .ok ? ProtocolID.okBytes : Array(String(status.rawValue).utf8)
        return [ProtocolID.controlBytes, ProtocolID.replyBytes, requestID, statusBytes, body]
    }

    /// The body parsed as JSON.
    public func json() throws(JSONParseError) -> JSONValue {
        body.isEmpty ? .null : try JSONParser.parse(body)
    }

    /// The leader's control endpoint a standby of a broker group named in its 503 (docs/PROTOCOL.md
    /// §13), if it named one: what both clients follow.
    public var leaderHint: String? {
        guard status == .unavailable else { return nil }
        return (try? ErrorReply(bytes: body))?.leader?.first
    }

    /// A standby's refusal (docs/PROTOCOL.md §13, marked `standby`): the request was not taken, and
    /// may be sent to the leader — the one it names (`leader`), or one being elected (`leader` nil).
    /// Nil for any other reply, a service's own 503 included (whatever its body says).
    package var standbyRefusal: StandbyRefusal? {
        guard status == .unavailable, let error = try? ErrorReply(bytes: body), error.standby == true else {
            return nil
        }
        return error.leader?.first.map(StandbyRefusal.leaderAt) ?? .noLeader
    }

    /// The `error` sentence of an error body, or a generic one.
    public var errorMessage: String {
        if let document = try? JSONTape(body), let error = document.member("error"),
            document[error].kind == .string || document[error].kind == .escapedString
        {
            return document.string(at: error)
        }
        return status.reason
    }
}

/// A decoded control message.
package enum ControlMessage: Sendable, Equatable {
    case request(ControlRequest)
    case reply(ControlReply)

    /// Decodes the frames after any routing envelope, saying exactly what is wrong when they do not
    /// follow the protocol.
    public static func decode(_ frames: ArraySlice<[UInt8]>) throws(ProtocolError) -> ControlMessage {
        guard let first = frames.first else { throw ProtocolError(.badRequest, "empty message") }
        let requestID = frames.count > 2 ? frames[frames.startIndex + 2] : []
        /// What an error reply may echo: frame 2 when it exists and is a valid request id.
        let echoed = requestID.count <= ControlRequest.maximumRequestIDLength ? requestID : []
        if first != ProtocolID.controlBytes {
            if first.count == 5 && first.starts(with: Array("LLC".utf8)) {
                throw ProtocolError(
                    .versionNotSupported,
                    "protocol version \(printable(first)) is not supported; this peer speaks \(ProtocolID.control)",
                    requestID: echoed)
            }
            throw ProtocolError(
                .badRequest,
                "not a Lifeline message: the first frame must be '\(ProtocolID.control)', got \(printable(first))",
                requestID: echoed)
        }
        guard frames.count >= 2 else { throw ProtocolError(.badRequest, "missing the command frame") }
        let commandBytes = frames[frames.startIndex + 1]
        guard let command = Command.byBytes[commandBytes] else {
            let known = Command.all.map(\.rawValue).joined(separator: ", ")
            throw ProtocolError(
                .badRequest, "unknown command \(printable(commandBytes)); known commands: \(known)",
                requestID: echoed)
        }
        guard frames.count >= 3 else {
            throw ProtocolError(.badRequest, "\(command) is missing the request-id frame")
        }
        guard requestID.count <= ControlRequest.maximumRequestIDLength else {
            throw ProtocolError(
                .badRequest, "request id longer than \(ControlRequest.maximumRequestIDLength) bytes")
        }
        if command == .reply { return .reply(try decodeReply(frames, requestID: requestID)) }
        return .request(try decodeRequest(command, frames, requestID: requestID))
    }

    private static func decodeReply(_ frames: ArraySlice<[UInt8]>, requestID: [UInt8]) throws(ProtocolError)
        -> ControlReply
    {
        guard frames.count == 5 else {
            throw ProtocolError(
                .badRequest, "REPLY has 5 frames (LLC01, REPLY, id, status, body), got \(frames.count)",
                requestID: requestID)
        }
        let statusBytes = frames[frames.startIndex + 3]
        guard statusBytes.count == 3, let code = Int(String(decoding: statusBytes, as: UTF8.self)),
            code >= 100
        else {
            throw ProtocolError(
                .badRequest,
                "REPLY status must be three digits from 100 to 999, got \(printable(statusBytes))",
                requestID: requestID)
        }
        return ControlReply(
            requestID: requestID, status: Status(rawValue: code), body: frames[frames.startIndex + 4])
    }

    private static func decodeRequest(_ command: Command, _ frames: ArraySlice<[UInt8]>, requestID: [UInt8])
        throws(ProtocolError) -> ControlRequest
    {
        let expected = command.takesPayload ? "4 or 5" : "4"
        let maximum = command.takesPayload ? 5 : 4
        guard frames.count >= 4 && frames.count <= maximum else {
            throw ProtocolError(
                .badRequest,
                "\(command) has \(expected) frames (LLC01, \(command), id, header\(command.takesPayload ? ", payload" : "")), got \(frames.count)",
                requestID: requestID)
        }
        let headerBytes = frames[frames.startIndex + 3]
        let document: JSONTape
        do {
            document = try JSONTape(headerBytes.isEmpty ? Self.emptyObject : headerBytes)
        } catch {
            throw ProtocolError(.badRequest, "\(command) header is not JSON: \(error)", requestID: requestID)
        }
        guard document[0].kind == .object else {
            throw ProtocolError(
                .badRequest, "\(command) header must be a JSON object, not \(document.value(at: 0).typeName)",
                requestID: requestID)
        }
        let payload = frames.count == 5 ? frames[frames.startIndex + 4] : nil
        return ControlRequest(command, requestID: requestID, document: document, payload: payload)
    }

    private static let emptyObject = Array("{}".utf8)

    /// A frame shown in an error: its text when printable, else its first bytes in hex.
    static func printable(_ frame: [UInt8]) -> String {
        if frame.count <= 40, let text = String(validating: frame, as: UTF8.self),
            text.unicodeScalars.allSatisfy({ $0.value >= 0x20 && $0.value != 0x7F })
        {
            return "'\(text)'"
        }
        let hex = frame.prefix(16).map { byte in
            let digits = String(byte, radix: 16)
            return digits.count == 1 ? "0" + digits : digits
        }.joined()
        return "\(frame.count) bytes 0x\(hex)\(frame.count > 16 ? "…" : "")"
    }
}
