import Glibc
import LifelineSupport
import Testing

@Suite("The HTTP client against a scripted peer", .timeLimit(.minutes(1)))
struct HTTPClientTests {
    @Test(
        "a POST carries its JSON with Content-Length and Connection: close; the answer's status and body come back"
    )
    func post() throws {
        let peer = try ScriptedHTTPPeer([.answer(ScriptedHTTPPeer.answer(200, #"{"ok":true}"#))])
        defer { peer.stop() }
        let answer = try HTTPClient.post(
            peer.url + "/v3/kv/range", body: Array(#"{"key":"a2V5"}"#.utf8), timeout: .seconds(2))
        #expect(answer.status == 200 && answer.body == Array(#"{"ok":true}"#.utf8))
        let request = try #require(peer.requests.first)
        #expect(request.method == "POST" && request.path == "/v3/kv/range")
        #expect(request.header("content-length") == "14" && request.header("connection") == "close")
        #expect(request.header("content-type") == "application/json")
        #expect(request.body == Array(#"{"key":"a2V5"}"#.utf8))
    }

    @Test("a chunked body (with chunk extensions, arriving in two reads) is joined")
    func chunked() throws {
        let whole = ScriptedHTTPPeer.chunked(200, [#"{"a":"#, "1", "}"])
        let peer = try ScriptedHTTPPeer([
            .answer(whole), .answerInTwoParts(Array(whole.prefix(40)), Array(whole.dropFirst(40))),
        ])
        defer { peer.stop() }
        for _ in 0..<2 {
            let answer = try HTTPClient.post(peer.url + "/x", body: [], timeout: .seconds(2))
            #expect(answer.status == 200 && answer.body == Array(#"{"a":1}"#.utf8))
        }
    }

    @Test(
        "a server that answers but keeps the connection open despite Connection: close runs into the time-out, saying so"
    )
    func keepAlive() throws {
        let peer = try ScriptedHTTPPeer([.answerKeepingOpen(ScriptedHTTPPeer.answer(200, "{}"))])
        defer { peer.stop() }
        #expect(throws: HTTPError(0, "\(peer.url)/x did not answer within 0.3 seconds")) {
            try HTTPClient.post(peer.url + "/x", body: [], timeout: .milliseconds(300))
        }
    }

    @Test(
        "errors name the URL and what failed: refused, silent, not HTTP, a cut chunk, a bad URL; an error status is an answer"
    )
    func failures() throws {
        let closed = "http://127.0.0.1:\(try freePort())"
        #expect(throws: HTTPError.self) { try HTTPClient.post(closed + "/x", body: [], timeout: .seconds(1)) }
        do {
            _ = try HTTPClient.post(closed + "/x", body: [], timeout: .seconds(1))
        } catch {
            #expect(
                error.message.hasPrefix("cannot connect to \(closed)/x: Connection refused"),
                "\(error.message)")
        }
        let peer = try ScriptedHTTPPeer([
            .silence, .answer(Array("garbage\r\n\r\n".utf8)),
            .answer(Array("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n10\r\nshort".utf8)),
            .answer(ScriptedHTTPPeer.answer(500, #"{"error":"boom"}"#, reason: "Internal Server Error")),
            .close,
        ])
        defer { peer.stop() }
        let said = { (timeout: Duration) -> String in
            do throws(HTTPError) {
                _ = try HTTPClient.post(peer.url + "/x", body: [], timeout: timeout)
                return "answered"
            } catch { return error.message }
        }
        #expect(said(.milliseconds(300)) == "\(peer.url)/x did not answer within 0.3 seconds")
        #expect(said(.seconds(2)) == "\(peer.url)/x answered something that is not HTTP")
        #expect(said(.seconds(2)) == "\(peer.url)/x sent a cut chunk")
        let failed = try HTTPClient.post(peer.url + "/x", body: [], timeout: .seconds(2))
        #expect(failed.status == 500 && failed.body == Array(#"{"error":"boom"}"#.utf8))
        #expect(
            said(.seconds(2)) == "\(peer.url)/x answered something that is not HTTP", "closed without a word")
        #expect(throws: HTTPError(0, "'https://etcd:2379' is not an http:// URL")) {
            try HTTPClient.post("https://etcd:2379", body: [], timeout: .seconds(1))
        }
        #expect(throws: HTTPError(0, "'http://etcd/v3' names no port (http://HOST:PORT/…)")) {
            try HTTPClient.post("http://etcd/v3", body: [], timeout: .seconds(1))
        }
    }
}

/// A loopback TCP port nobody listens on now: bound, named, and closed again.
func freePort() throws -> UInt16 {
    let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    defer { close(descriptor) }
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    var length = socklen_t(MemoryLayout<sockaddr_in>.size)
    let bound = withUnsafeMutablePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
            bind(descriptor, $0, length) == 0 && getsockname(descriptor, $0, &length) == 0
        }
    }
    guard bound else { throw HTTPError(0, "no free port: \(String(cString: strerror(errno)))") }
    return UInt16(bigEndian: address.sin_port)
}
