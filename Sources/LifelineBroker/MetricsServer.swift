import Foundation
import Glibc
import LifelineSupport
import Synchronization

/// A small HTTP/1.1 responder on its own thread for Prometheus: `GET /metrics` answers the
/// broker's counters in the text exposition format (asked of the broker's thread each time);
/// anything else is 404 or 405. With a token, a request without `Authorization: Bearer TOKEN` gets
/// 401. One request per connection (`Connection: close`).
final class MetricsServer: Sendable {
    /// The address actually bound, `HOST:PORT`.
    let address: String
    private let listener: Int32

    /// Binds `address` (`HOST:PORT`, IPv4; port 0 picks one) and serves from a new thread;
    /// `render` produces the body (nil: the broker did not answer in time); `token`, when given, is
    /// the bearer token every request must carry.
    init(address: String, token: String? = nil, render: @escaping @Sendable () -> String?) throws {
        let parts = address.split(separator: ":", omittingEmptySubsequences: false)
        guard parts.count == 2, let port = UInt16(parts[1]) else {
            throw SecurityError("--metrics: expected HOST:PORT, e.g. 127.0.0.1:9464, not '\(address)'")
        }
        let host = parts[0].isEmpty ? "0.0.0.0" : String(parts[0] == "localhost" ? "127.0.0.1" : parts[0])
        var socketAddress = sockaddr_in()
        socketAddress.sin_family = sa_family_t(AF_INET)
        socketAddress.sin_port = port.bigEndian
        guard inet_pton(AF_INET, host, &socketAddress.sin_addr) == 1 else {
            throw SecurityError("--metrics: '\(host)' is not an IPv4 address")
        }
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard descriptor >= 0 else {
            throw SecurityError("--metrics: socket() failed: \(String(cString: strerror(errno)))")
        }
        var yes: Int32 = 1
        setsockopt(descriptor, SOL_SOCKET, SO_REUSEADDR, &yes, socklen_t(MemoryLayout<Int32>.size))
        let bound = withUnsafePointer(to: &socketAddress) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard bound == 0, listen(descriptor, 16) == 0 else {
            let reason = String(cString: strerror(errno))
            close(descriptor)
            throw SecurityError("--metrics: cannot listen on \(address): \(reason)")
        }
        var actual = sockaddr_in()
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &actual) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(descriptor, $0, &length) }
        }
        self.address = "\(host):\(UInt16(bigEndian: actual.sin_port))"
        listener = descriptor
        let thread = Thread { [descriptor] in
            ThreadName.set("ll-metrics")
            while true {
                let client = accept(descriptor, nil, nil)
                if client < 0 {
                    if errno == EINTR || errno == ECONNABORTED { continue }
                    return
                }
                Self.serve(client, token: token, render: render)
                close(client)
            }
        }
        thread.start()
    }

    /// Stops accepting (the thread ends).
    func stop() { shutdown(listener, Int32(SHUT_RDWR)) }

    private static func serve(_ client: Int32, token: String?, render: @Sendable () -> String?) {
        var timeout = timeval(tv_sec: 2, tv_usec: 0)
        setsockopt(client, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        var request: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while request.count < 16_384 {
            let count = buffer.withUnsafeMutableBytes { recv(client, $0.baseAddress, $0.count, 0) }
            if count <= 0 { break }
            request += buffer[0..<count]
            if request.count >= 4, request.suffix(4) == [13, 10, 13, 10] { break }
            if let text = String(bytes: request, encoding: .utf8), text.contains("\r\n\r\n") { break }
        }
        let line = String(decoding: request.prefix { $0 != 13 && $0 != 10 }, as: UTF8.self)
        let parts = line.split(separator: " ")
        let (status, type, body): (String, String, String)
        var challenge = ""
        if parts.count < 2 {
            (status, type, body) = ("400 Bad Request", "text/plain", "expected an HTTP request line\n")
        } else if parts[0] != "GET" && parts[0] != "HEAD" {
            (status, type, body) = ("405 Method Not Allowed", "text/plain", "only GET /metrics\n")
        } else if let token, !Self.authorizes(request, token: token) {
            (status, type, body) = (
                "401 Unauthorized", "text/plain", "/metrics needs the header 'Authorization: Bearer TOKEN'\n"
            )
            challenge = "WWW-Authenticate: Bearer realm=\"lifeline\"\r\n"
        } else if parts[1].split(separator: "?").first != "/metrics" {
            (status, type, body) = ("404 Not Found", "text/plain", "only /metrics is served here\n")
        } else if let text = render() {
            (status, type, body) = ("200 OK", "text/plain; version=0.0.4; charset=utf-8", text)
        } else {
            (status, type, body) = (
                "503 Service Unavailable", "text/plain", "the broker did not answer in time\n"
            )
        }
        let payload = Array(body.utf8)
        let head =
            "HTTP/1.1 \(status)\r\n\(challenge)Content-Type: \(type)\r\nContent-Length: \(payload.count)\r\nConnection: close\r\n\r\n"
        let bytes = Array(head.utf8) + (parts.first == "HEAD" ? [] : payload)
        var sent = 0
        while sent < bytes.count {
            let count = bytes[sent...].withUnsafeBytes {
                send(client, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL))
            }
            if count <= 0 { break }
            sent += count
        }
    }
}

extension MetricsServer {
    /// True when the request's headers carry `Authorization: Bearer TOKEN` with this token (compared
    /// in constant time).
    static func authorizes(_ request: [UInt8], token: String) -> Bool {
        let text = String(decoding: request, as: UTF8.self)
        for line in text.split(separator: "\r\n").dropFirst() {
            guard let colon = line.firstIndex(of: ":"),
                line[..<colon].lowercased() == "authorization"
            else { continue }
            let value = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
            guard value.count > 7, value.prefix(7).lowercased() == "bearer " else { return false }
            let given = Array(value.dropFirst(7).trimmingCharacters(in: .whitespaces).utf8)
            let expected = Array(token.utf8)
            var difference = given.count ^ expected.count
            for index in expected.indices {
                difference |= Int(expected[index] ^ (index < given.count ? given[index] : 0))
            }
            return difference == 0
        }
        return false
    }
}

/// One metrics scrape waiting for the broker's thread.
final class MetricsRequest: Sendable {
    private let text = Mutex<String?>(nil)
    private let done = DispatchSemaphore(value: 0)

    func fulfill(_ body: String) {
        text.withLock { $0 = body }
        done.signal()
    }

    func wait(seconds: Double) -> String? {
        guard done.wait(timeout: .now() + seconds) == .success else { return nil }
        return text.withLock { $0 }
    }
}
