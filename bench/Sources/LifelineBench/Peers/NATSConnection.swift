/// A NATS client over its text protocol (docs.nats.io, "Client Protocol"): CONNECT, PUB, SUB, MSG,
/// PING/PONG. Publishes are queued and sent on ``flush()``, as the C client pipelines them.
final class NATSConnection {
    private let socket: PlainSocket

    /// A message as MSG delivers it.
    struct Message {
        var subject: [UInt8]
        var reply: [UInt8]?
        var payload: [UInt8]
    }

    /// Connects to the server at `address` (`127.0.0.1:4222`) and completes the handshake.
    /// - Throws: ``BenchError`` when the server is not there or refuses.
    init(_ address: String) throws {
        socket = try PlainSocket(address)
        let info = try socket.readLine()
        guard info.starts(with: Array("INFO".utf8)) else { throw BenchError("nats: no INFO from \(address)") }
        socket.write(
            Array(#"CONNECT {"verbose":false,"pedantic":false,"echo":false,"protocol":1}"#.utf8) + crlf)
        try ping()
    }

    /// Round trip to the server: every earlier command has been processed when it returns.
    /// - Throws: ``BenchError`` when the server closed the connection or answered -ERR.
    func ping() throws {
        socket.write(Array("PING".utf8) + crlf)
        try socket.flush()
        while true {
            let line = try socket.readLine()
            if line == Array("PONG".utf8) { return }
            if line.starts(with: Array("-ERR".utf8)) {
                throw BenchError("nats: \(String(decoding: line, as: UTF8.self))")
            }
        }
    }

    /// Subscribes to `subject` as subscription `sid`.
    func subscribe(_ subject: String, sid: Int) {
        socket.write(Array("SUB \(subject) \(sid)".utf8) + crlf)
    }

    /// Queues a PUB of `payload` on `subject`, with `reply` as its reply subject.
    func publish(_ subject: [UInt8], _ payload: [UInt8], reply: [UInt8]? = nil) {
        socket.write(Array("PUB ".utf8) + subject)
        if let reply { socket.write([0x20] + reply) }
        socket.write(Array(" \(payload.count)".utf8) + crlf)
        socket.write(payload)
        socket.write(crlf)
    }

    /// Whether bytes from the server wait to be read (the next ``next()`` would not block).
    var hasInput: Bool { socket.hasInput }

    /// Makes ``next()`` fail after `seconds` without a line from the server.
    func limitReads(toSeconds seconds: Int) { socket.limitReads(toSeconds: seconds) }

    /// Sends everything queued.
    /// - Throws: ``BenchError`` when the server closed the connection.
    func flush() throws { try socket.flush() }

    /// The next message (answering the server's PINGs on the way).
    /// - Throws: ``BenchError`` when the server closed the connection or answered -ERR.
    func next() throws -> Message {
        while true {
            let line = try socket.readLine()
            if line.starts(with: Array("MSG ".utf8)) {
                let fields = line.split(separator: 0x20)
                guard fields.count == 4 || fields.count == 5, let size = asciiNumber(fields[fields.count - 1])
                else { throw BenchError("nats: bad MSG line") }
                return Message(
                    subject: Array(fields[1]), reply: fields.count == 5 ? Array(fields[3]) : nil,
                    payload: try socket.readPayload(size))
            } else if line == Array("PING".utf8) {
                socket.write(Array("PONG".utf8) + crlf)
                try socket.flush()
            } else if line.starts(with: Array("-ERR".utf8)) {
                throw BenchError("nats: \(String(decoding: line, as: UTF8.self))")
            }
        }
    }

    private let crlf: [UInt8] = [0x0D, 0x0A]
}
