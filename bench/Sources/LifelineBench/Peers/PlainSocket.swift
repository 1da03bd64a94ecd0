import Glibc

/// A blocking stream socket (TCP on loopback, or a Unix socket) with a read buffer and a write
/// buffer, for the peers' text protocols: writes collect until ``flush()``, as their C clients
/// pipeline them.
final class PlainSocket {
    private let descriptor: Int32
    private var input: [UInt8] = []
    private var start = 0
    private var output: [UInt8] = []
    /// What one `recv` reads into, made once.
    private var scratch = [UInt8](repeating: 0, count: 65_536)

    /// Connects to `host:port`, or to the Unix socket at a path starting with `/`.
    /// - Throws: ``BenchError`` naming the address and errno.
    init(_ address: String) throws {
        if address.hasPrefix("/") {
            descriptor = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
            var unix = sockaddr_un()
            unix.sun_family = sa_family_t(AF_UNIX)
            withUnsafeMutableBytes(of: &unix.sun_path) { path in
                for (index, byte) in address.utf8.prefix(path.count - 1).enumerated() { path[index] = byte }
            }
            let result = withUnsafePointer(to: &unix) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
                }
            }
            guard result == 0 else { throw BenchError("cannot connect to \(address): errno \(errno)") }
        } else {
            let parts = address.split(separator: ":")
            guard parts.count == 2, let port = UInt16(parts[1]) else {
                throw BenchError("bad address \(address)")
            }
            descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            var inet = sockaddr_in()
            inet.sin_family = sa_family_t(AF_INET)
            inet.sin_port = port.bigEndian
            inet_pton(AF_INET, String(parts[0]), &inet.sin_addr)
            let result = withUnsafePointer(to: &inet) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
                }
            }
            guard result == 0 else { throw BenchError("cannot connect to \(address): errno \(errno)") }
            var on: Int32 = 1
            setsockopt(descriptor, Int32(IPPROTO_TCP), TCP_NODELAY, &on, socklen_t(MemoryLayout<Int32>.size))
        }
    }

    deinit { close(descriptor) }

    /// Makes a read that waits longer than `seconds` fail (``BenchError``) instead of blocking on.
    func limitReads(toSeconds seconds: Int) {
        var limit = timeval(tv_sec: seconds, tv_usec: 0)
        setsockopt(descriptor, SOL_SOCKET, SO_RCVTIMEO, &limit, socklen_t(MemoryLayout<timeval>.size))
    }

    /// Queues `bytes` for the next ``flush()``.
    func write(_ bytes: some Sequence<UInt8>) { output.append(contentsOf: bytes) }

    /// Sends everything queued.
    /// - Throws: ``BenchError`` when the peer closed the connection.
    func flush() throws {
        var sent = 0
        while sent < output.count {
            let count = output[sent...].withUnsafeBytes {
                Glibc.send(descriptor, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL))
            }
            guard count > 0 else { throw BenchError("send failed: errno \(errno)") }
            sent += count
        }
        output.removeAll(keepingCapacity: true)
    }

    /// Whether a read would not block (bytes buffered or waiting in the socket).
    var hasInput: Bool {
        if start < input.count { return true }
        var poll = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
        return Glibc.poll(&poll, 1, 0) > 0
    }

    /// The next line, without its `\r\n`.
    /// - Throws: ``BenchError`` when the peer closed the connection.
    func readLine() throws -> [UInt8] {
        while true {
            if let end = input[start...].firstIndex(of: 0x0A) {
                let line = Array(input[start..<(end > start && input[end - 1] == 0x0D ? end - 1 : end)])
                start = end + 1
                return line
            }
            try fill()
        }
    }

    /// The next `count` bytes and the `\r\n` after them.
    /// - Throws: ``BenchError`` when the peer closed the connection.
    func readPayload(_ count: Int) throws -> [UInt8] {
        while input.count - start < count + 2 { try fill() }
        let payload = Array(input[start..<(start + count)])
        start += count + 2
        return payload
    }

    private func fill() throws {
        if start > 0 && start == input.count {
            input.removeAll(keepingCapacity: true)
            start = 0
        } else if start > 65_536 {
            input.removeSubrange(0..<start)
            start = 0
        }
        let count = scratch.withUnsafeMutableBytes { recv(descriptor, $0.baseAddress, $0.count, 0) }
        guard count > 0 else {
            throw BenchError(count == 0 ? "the peer closed the connection" : "no answer: errno \(errno)")
        }
        input.append(contentsOf: scratch[0..<count])
    }
}

/// A decimal number in ASCII.
func asciiNumber(_ bytes: some Collection<UInt8>) -> Int? {
    guard !bytes.isEmpty else { return nil }
    var value = 0
    for byte in bytes {
        guard (0x30...0x39).contains(byte) else { return nil }
        value = value * 10 + Int(byte - 0x30)
    }
    return value
}
