import Glibc
import LifelineSupport
import Synchronization
import Testing

@Suite("The HTTP listener and request reader against a raw client", .timeLimit(.minutes(1)))
struct HTTPListenerTests {
    /// A listener that reads one request per connection (a body of at most 64 bytes, 1 s between
    /// reads) and answers its method, path and body, or the error's status and sentence.
    final class EchoServer: Sendable {
        let listener: HTTPListener

        /// `admit` refuses what it returns a refusal for, once the head is read.
        init(timeoutSeconds: Int = 1, admit: @escaping @Sendable (HTTPRequest) -> HTTPError? = { _ in nil })
            throws
        {
            listener = try HTTPListener(address: "127.0.0.1:0", threadName: "ll-echo-http") { client in
                defer { close(client) }
                do throws(HTTPError) {
                    let request = try HTTPRequest.read(
                        from: client, maxHead: 256, maxBody: 64, timeoutSeconds: timeoutSeconds, admit: admit)
                    let query = request.query.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }
                    let text =
                        "\(request.method) \(request.path) \(query.joined(separator: "&")) \(String(decoding: request.body, as: UTF8.self))"
                    HTTPResponse(status: 200, body: Array(text.utf8)).send(to: client)
                } catch {
                    HTTPResponse(status: error.status, body: Array(error.message.utf8)).send(to: client)
                }
            }
        }

        /// Sends `parts` (pausing `pause` µs between them) on a new connection and returns all it got
        /// back.
        func exchange(_ parts: [String], pause: UInt32 = 20_000) -> String {
            let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            defer { close(descriptor) }
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_port = listener.port.bigEndian
            address.sin_addr.s_addr = inet_addr("127.0.0.1")
            let connected = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0
                }
            }
            guard connected else { return "not connected" }
            for (index, part) in parts.enumerated() {
                if index > 0 { usleep(pause) }
                _ = HTTPResponse.write(Array(part.utf8), to: descriptor)
            }
            var answer: [UInt8] = []
            var buffer = [UInt8](repeating: 0, count: 4096)
            while true {
                let count = buffer.withUnsafeMutableBytes { recv(descriptor, $0.baseAddress, $0.count, 0) }
                if count <= 0 { break }
                answer += buffer[0..<count]
            }
            return String(decoding: answer, as: UTF8.self)
        }
    }

    @Test("a request in pieces is read whole: head, query, a Content-Length body; the response is framed")
    func pieces() throws {
        let server = try EchoServer()
        defer { server.listener.stop() }
        let answer = server.exchange([
            "POST /v3/kv?key=a%20b&x=1+2 HT", "TP/1.1\r\nHost: h\r\nContent-Le", "ngth: 5\r\n\r\nhe", "llo",
        ])
        #expect(answer.hasPrefix("HTTP/1.1 200 OK\r\n"))
        #expect(answer.contains("Content-Length: ") && answer.contains("Connection: close\r\n"))
        #expect(answer.hasSuffix("POST /v3/kv key=a b&x=1 2 hello"), "\(answer)")
    }

    @Test("bad requests get their status and a sentence: malformed, chunked, too large, too slow, cut short")
    func refusals() throws {
        let server = try EchoServer()
        defer { server.listener.stop() }
        let cases: [([String], String)] = [
            (["GET nowhere\r\n\r\n"], "400 Bad Request"),
            (["GET / HTTP/2\r\n\r\n"], "400 Bad Request"),
            (["GET / HTTP/1.1\r\nno colon\r\n\r\n"], "400 Bad Request"),
            (
                ["POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n"],
                "411 Length Required"
            ),
            (["POST / HTTP/1.1\r\nContent-Length: 65\r\n\r\n"], "413 Content Too Large"),
            (["POST / HTTP/1.1\r\nContent-Length: -1\r\n\r\n"], "400 Bad Request"),
            (
                ["GET / HTTP/1.1\r\nX: " + String(repeating: "x", count: 300) + "\r\n\r\n"],
                "431 Request Header Fields Too Large"
            ),
            (["GET / HTTP/1.1\r\n"], "408 Request Timeout"),
        ]
        for (parts, status) in cases {
            let answer = server.exchange(parts)
            #expect(answer.hasPrefix("HTTP/1.1 \(status)\r\n"), "\(parts.joined()): \(answer)")
        }
        #expect(server.exchange(["POST / HTTP/1.1\r\nContent-Length: 5\r\n\r\nhe"]).contains("408"))
        for header in ["Host", "Origin", "X-Lifeline-Token", "Cookie", "Authorization"] {
            let answer = server.exchange(["GET / HTTP/1.1\r\n\(header): a\r\n\(header): b\r\n\r\n"])
            #expect(
                answer.hasPrefix("HTTP/1.1 400 Bad Request\r\n")
                    && answer.contains("\(header) is given twice"))
        }
    }

    @Test(
        "a request that trickles in, a byte at a time within the time between reads, is cut at its whole time: 408"
    )
    func trickle() throws {
        let server = try EchoServer()
        defer { server.listener.stop() }
        // 18 bytes 150 ms apart: each read waits less than the 1 s, the request takes 2.5 s.
        let answer = server.exchange("GET / HTTP/1.1\r\n\r\n".map { String($0) }, pause: 150_000)
        #expect(answer.hasPrefix("HTTP/1.1 408 Request Timeout\r\n"), "\(answer)")
    }

    /// A connection to `port` from `source` (any loopback address: all of 127/8 is this host's),
    /// which sends nothing.
    static func connection(to port: UInt16, from source: String) -> Int32 {
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var local = sockaddr_in()
        local.sin_family = sa_family_t(AF_INET)
        local.sin_addr.s_addr = inet_addr(source)
        _ = withUnsafePointer(to: &local) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        _ = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        return descriptor
    }

    /// What `GET /` from `source` is answered: empty when the connection is closed unanswered.
    static func get(_ port: UInt16, from source: String) -> String {
        let descriptor = connection(to: port, from: source)
        defer { close(descriptor) }
        var timeout = timeval(tv_sec: 10, tv_usec: 0)
        setsockopt(descriptor, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        let request = Array("GET / HTTP/1.1\r\nConnection: close\r\n\r\n".utf8)
        _ = request.withUnsafeBytes { send(descriptor, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
        var answer: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = buffer.withUnsafeMutableBytes { recv(descriptor, $0.baseAddress, $0.count, 0) }
            guard count > 0 else { break }
            answer += buffer[0..<count]
        }
        return String(decoding: answer, as: UTF8.self)
    }

    @Test(
        "beyond the connections a listener handles from one address, one more from it is closed unanswered while another address is served; beyond those it handles at all, one more from anywhere"
    )
    func connectionCaps() throws {
        // Held connections wait for their heads for 30 s: none frees its place while the test runs.
        let server = try EchoServer(timeoutSeconds: 30)
        defer { server.listener.stop() }
        let port = server.listener.port
        var held: [Int32] = []
        defer { for descriptor in held { close(descriptor) } }
        for _ in 0..<HTTPListener.maximumPerPeer { held.append(Self.connection(to: port, from: "127.0.0.1")) }
        #expect(
            Self.get(port, from: "127.0.0.1").isEmpty, "closed unanswered while its address holds its share")
        #expect(
            Self.get(port, from: "127.0.0.9").hasPrefix("HTTP/1.1 200 OK\r\n"), "another address is served")
        let addresses = HTTPListener.maximumConnections / HTTPListener.maximumPerPeer
        for peer in 2...addresses {
            for _ in 0..<HTTPListener.maximumPerPeer {
                held.append(Self.connection(to: port, from: "127.0.0.\(peer)"))
            }
        }
        #expect(Self.get(port, from: "127.0.0.9").isEmpty, "closed unanswered while all are held")
        for descriptor in held { close(descriptor) }
        held.removeAll()
        // The held ones end as their reads see the close: then one is served again.
        var answer = ""
        for _ in 0..<50 where !answer.hasPrefix("HTTP/1.1 200") {
            answer = Self.get(port, from: "127.0.0.1")
            if !answer.hasPrefix("HTTP/1.1 200") { usleep(100_000) }  // polling with a bound
        }
        #expect(answer.hasPrefix("HTTP/1.1 200 OK\r\n"), "\(answer)")
    }

    @Test("what the reader's admit refuses is refused as soon as the head is read, before the body's size")
    func admitFirst() throws {
        let server = try EchoServer { $0.header("x-token") == "ok" ? nil : HTTPError(403, "no token") }
        defer { server.listener.stop() }
        #expect(server.exchange(["POST / HTTP/1.1\r\nContent-Length: 65\r\n\r\n"]).hasPrefix("HTTP/1.1 403 "))
        #expect(
            server.exchange(["POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n"]).hasPrefix(
                "HTTP/1.1 403 "))
        #expect(
            server.exchange(["POST / HTTP/1.1\r\nX-Token: ok\r\nContent-Length: 65\r\n\r\n"]).hasPrefix(
                "HTTP/1.1 413 "))
        #expect(
            server.exchange(["POST /a HTTP/1.1\r\nX-Token: ok\r\nContent-Length: 2\r\n\r\nhi"]).hasSuffix(
                "POST /a  hi"))
    }

    @Test("a listener binds port 0 to a free port, says where, and refuses a bad address in a sentence")
    func binding() throws {
        let listener = try HTTPListener(address: "localhost:0", threadName: "ll-bind-test") { close($0) }
        defer { listener.stop() }
        #expect(listener.port != 0 && listener.address == "127.0.0.1:\(listener.port)" && listener.isLoopback)
        #expect(throws: HTTPError(0, "expected HOST:PORT, e.g. 127.0.0.1:7290, not 'nowhere'")) {
            try HTTPListener(address: "nowhere", threadName: "ll-bind-test") { close($0) }
        }
        #expect(throws: HTTPError(0, "'example.com' is not an IP address (nor localhost)")) {
            try HTTPListener(address: "example.com:80", threadName: "ll-bind-test") { close($0) }
        }
    }
}
