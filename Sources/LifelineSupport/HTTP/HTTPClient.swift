import Glibc

/// A blocking HTTP/1.1 client for small JSON exchanges (etcd's gateway): one connection per
/// request, `Connection: close` (the server closes first, so the client holds no TIME_WAIT), a
/// deadline on every read and write; the answer is what arrives until the server closes. Plain
/// `http://` only.
package enum HTTPClient {
    /// The answer: status and body (a chunked body is joined).
    package struct Answer: Sendable {
        package var status: Int
        package var body: [UInt8]
    }

    /// POSTs `body` as JSON to `url` (`http://HOST:PORT/PATH`) and reads the whole answer.
    /// - Throws: ``HTTPError`` (status 0) naming the URL and what failed: the address, the
    ///   connection, the deadline, or an answer that is not HTTP.
    package static func post(_ url: String, body: [UInt8], timeout: Duration) throws(HTTPError) -> Answer {
        let (host, port, path) = try parse(url)
        let descriptor = try connect(host: host, port: port, url: url, timeout: timeout)
        defer { close(descriptor) }
        var request = Array(
            "POST \(path) HTTP/1.1\r\nHost: \(host):\(port)\r\nContent-Type: application/json\r\nContent-Length: \(body.count)\r\nConnection: close\r\n\r\n"
                .utf8)
        request += body
        var offset = 0
        while offset < request.count {
            let written = request.withUnsafeBytes {
                send(descriptor, $0.baseAddress! + offset, request.count - offset, Int32(MSG_NOSIGNAL))
            }
            if written < 0 && errno == EINTR { continue }
            guard written > 0 else { throw failure(url, "sending failed") }
            offset += written
        }
        var answer: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 16_384)
        while true {
            let count = chunk.withUnsafeMutableBytes { recv(descriptor, $0.baseAddress, $0.count, 0) }
            if count < 0 && errno == EINTR { continue }
            if count < 0 {
                throw errno == EAGAIN
                    ? HTTPError(0, "\(url) did not answer within \(timeout)") : failure(url, "reading failed")
            }
            if count == 0 { break }
            answer += chunk[0..<count]
            guard answer.count <= 64 << 20 else { throw HTTPError(0, "\(url) answered more than 64 MiB") }
        }
        return try decode(answer, url: url)
    }

    private static func parse(_ url: String) throws(HTTPError) -> (String, UInt16, String) {
        guard url.hasPrefix("http://") else { throw HTTPError(0, "'\(url)' is not an http:// URL") }
        let rest = url.dropFirst("http://".count)
        let authority = rest.prefix { $0 != "/" }
        let path = rest.dropFirst(authority.count)
        guard let colon = authority.lastIndex(of: ":"),
            let port = UInt16(authority[authority.index(after: colon)...])
        else { throw HTTPError(0, "'\(url)' names no port (http://HOST:PORT/…)") }
        var host = String(authority[..<colon])
        if host.hasPrefix("[") && host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
        return (host, port, path.isEmpty ? "/" : String(path))
    }

    private static func connect(host: String, port: UInt16, url: String, timeout: Duration) throws(HTTPError)
        -> Int32
    {
        var hints = addrinfo()
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        var list: UnsafeMutablePointer<addrinfo>?
        guard getaddrinfo(host, String(port), &hints, &list) == 0, let first = list else {
            throw HTTPError(0, "cannot resolve the host of \(url)")
        }
        defer { freeaddrinfo(list) }
        var reason = "no address"
        var entry: UnsafeMutablePointer<addrinfo>? = first
        while let address = entry {
            entry = address.pointee.ai_next
            let descriptor = socket(
                address.pointee.ai_family, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
            guard descriptor >= 0 else { continue }
            var limit = timeval(
                tv_sec: Int(timeout.components.seconds),
                tv_usec: Int(timeout.components.attoseconds / 1_000_000_000_000))
            setsockopt(descriptor, SOL_SOCKET, SO_RCVTIMEO, &limit, socklen_t(MemoryLayout<timeval>.size))
            setsockopt(descriptor, SOL_SOCKET, SO_SNDTIMEO, &limit, socklen_t(MemoryLayout<timeval>.size))
            if Glibc.connect(descriptor, address.pointee.ai_addr, address.pointee.ai_addrlen) == 0 {
                return descriptor
            }
            reason = String(cString: strerror(errno))
            close(descriptor)
        }
        throw HTTPError(0, "cannot connect to \(url): \(reason)")
    }

    private static func failure(_ url: String, _ what: String) -> HTTPError {
        HTTPError(0, "\(url): \(what): \(String(cString: strerror(errno)))")
    }

    /// Splits status line, headers and body; joins a chunked body.
    private static func decode(_ bytes: [UInt8], url: String) throws(HTTPError) -> Answer {
        let separator: [UInt8] = [13, 10, 13, 10]
        guard let end = bytes.firstRange(of: separator) else {
            throw HTTPError(0, "\(url) answered something that is not HTTP")
        }
        let head = String(decoding: bytes[..<end.lowerBound], as: UTF8.self)
        let lines = head.split(separator: "\r\n")
        let statusWords = lines.first?.split(separator: " ") ?? []
        guard statusWords.count >= 2, statusWords[0].hasPrefix("HTTP/1."), let status = Int(statusWords[1])
        else {
            throw HTTPError(0, "\(url) answered something that is not HTTP")
        }
        let chunked = lines.dropFirst().contains {
            $0.lowercased().hasPrefix("transfer-encoding:") && $0.lowercased().contains("chunked")
        }
        let body = Array(bytes[end.upperBound...])
        return Answer(status: status, body: chunked ? try unchunk(body, url: url) : body)
    }

    private static func unchunk(_ bytes: [UInt8], url: String) throws(HTTPError) -> [UInt8] {
        var body: [UInt8] = []
        var index = 0
        while index < bytes.count {
            guard let lineEnd = bytes[index...].firstRange(of: [13, 10]),
                let size = Int(
                    String(decoding: bytes[index..<lineEnd.lowerBound], as: UTF8.self).prefix { $0 != ";" },
                    radix: 16)
            else { throw HTTPError(0, "\(url) sent a bad chunk") }
            if size == 0 { break }
            let start = lineEnd.upperBound
            guard start + size <= bytes.count else { throw HTTPError(0, "\(url) sent a cut chunk") }
            body += bytes[start..<start + size]
            index = start + size + 2
        }
        return body
    }
}
