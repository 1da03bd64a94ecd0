/// A Redis client over RESP (redis.io, "Redis serialization protocol"): commands as arrays of bulk
/// strings, SUBSCRIBE pushes as `message` arrays. Commands are queued and sent on ``flush()``, as
/// hiredis pipelines them.
final class RedisConnection {
    private let socket: PlainSocket

    /// Connects to `127.0.0.1:6379`, or to the Unix socket at a path.
    /// - Throws: ``BenchError`` when the server is not there.
    init(_ address: String) throws { socket = try PlainSocket(address) }

    /// Queues one command.
    func command(_ parts: [[UInt8]]) {
        socket.write(Array("*\(parts.count)\r\n".utf8))
        for part in parts {
            socket.write(Array("$\(part.count)\r\n".utf8))
            socket.write(part)
            socket.write([0x0D, 0x0A])
        }
    }

    /// Makes ``next()`` fail after `seconds` without a reply.
    func limitReads(toSeconds seconds: Int) { socket.limitReads(toSeconds: seconds) }

    /// Sends everything queued.
    /// - Throws: ``BenchError`` when the server closed the connection.
    func flush() throws { try socket.flush() }

    /// One reply: an integer, a status, a bulk string, or an array of them (as text for a status or
    /// error, which throws).
    enum Reply {
        case integer(Int)
        case bulk([UInt8]?)
        case status([UInt8])
        case array([Reply])
    }

    /// The next reply or push.
    /// - Throws: ``BenchError`` for an error reply or a closed connection.
    func next() throws -> Reply {
        let line = try socket.readLine()
        guard let kind = line.first else { throw BenchError("redis: empty reply line") }
        let rest = line.dropFirst()
        switch kind {
        case UInt8(ascii: ":"):
            return .integer(asciiNumber(rest.drop { $0 == UInt8(ascii: "-") }) ?? 0)
        case UInt8(ascii: "+"):
            return .status(Array(rest))
        case UInt8(ascii: "$"):
            guard let size = asciiNumber(rest) else { return .bulk(nil) }
            return .bulk(try socket.readPayload(size))
        case UInt8(ascii: "*"):
            guard let count = asciiNumber(rest) else { return .array([]) }
            return .array(try (0..<count).map { _ in try next() })
        default:
            throw BenchError("redis: \(String(decoding: line, as: UTF8.self))")
        }
    }
}
