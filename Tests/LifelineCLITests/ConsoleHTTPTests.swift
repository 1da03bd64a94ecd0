import LifelineSupport
import Testing

@testable import LifelineCLI

@Suite("The console's HTTP: requests, who may read and who may act")
struct ConsoleHTTPTests {
    static func request(_ head: String, body: String = "") throws -> HTTPRequest {
        var request = try HTTPRequest.parse(head: head)
        request.body = Array(body.utf8)
        return request
    }

    @Test("a request's line, headers and query are read; a malformed one is refused with why")
    func parsing() throws {
        let request = try Self.request(
            "GET /tail?filter=com.example.*&note=a+b%20c HTTP/1.1\r\nHost: 127.0.0.1:7290\r\nCookie: a=1; lifeline_console=xyz\r\n"
        )
        #expect(request.method == "GET")
        #expect(request.path == "/tail")
        #expect(request.query == ["filter": "com.example.*", "note": "a b c"])
        #expect(request.header("HOST") == "127.0.0.1:7290")
        #expect(request.cookie("lifeline_console") == "xyz")
        #expect(throws: HTTPError(400, "expected a request line 'METHOD /PATH HTTP/1.1', not 'GET'")) {
            try HTTPRequest.parse(head: "GET")
        }
        #expect(throws: HTTPError(400, "only HTTP/1.0 and HTTP/1.1 are spoken here, not 'HTTP/2'")) {
            try HTTPRequest.parse(head: "GET / HTTP/2")
        }
        #expect(throws: HTTPError(400, "a header line needs 'Name: value', not 'nocolon'")) {
            try HTTPRequest.parse(head: "GET / HTTP/1.1\r\nnocolon")
        }
        #expect(throws: HTTPError(400, "a header line needs 'Name: value', not 'Bad Header: x'")) {
            try HTTPRequest.parse(head: "GET / HTTP/1.1\r\nBad Header: x")
        }
        #expect(throws: HTTPError(400, "Content-Length is given twice, as 5 and 10")) {
            try HTTPRequest.parse(head: "POST / HTTP/1.1\r\nContent-Length: 5\r\nContent-Length: 10")
        }
        #expect(HTTPRequest.endOfHead(in: Array("GET / HTTP/1.1\r\n\r\nbody".utf8)) == 14)
        #expect(HTTPRequest.endOfHead(in: Array("GET / HTTP/1.1\r\n".utf8)) == nil)
    }

    @Test("on loopback, a page under another Host name is refused (DNS rebinding); reading needs no token")
    func loopbackReading() throws {
        let access = ConsoleAccess(
            token: "t0ken-t0ken-t0ken", tokenForReading: false, address: "127.0.0.1:7290", loopback: true)
        #expect(access.readRefusal(try Self.request("GET / HTTP/1.1\r\nHost: 127.0.0.1:7290")) == nil)
        #expect(access.readRefusal(try Self.request("GET / HTTP/1.1\r\nHost: localhost:7290")) == nil)
        #expect(
            access.readRefusal(try Self.request("GET / HTTP/1.1\r\nHost: evil.example:7290"))?.status == 421)
        #expect(access.readRefusal(try Self.request("GET / HTTP/1.1"))?.status == 421)
        #expect(
            access.readRefusal(
                try Self.request("GET /trace HTTP/1.1\r\nHost: 127.0.0.1:7290\r\nOrigin: http://evil.example")
            )?
            .message == "a request from another site (http://evil.example) may not read this console",
            "another site's page opens no stream (a trace would take a lease)")
        #expect(
            access.readRefusal(
                try Self.request(
                    "GET /trace HTTP/1.1\r\nHost: 127.0.0.1:7290\r\nOrigin: http://127.0.0.1:7290"))
                == nil)
        #expect(
            access.readRefusal(
                try Self.request("GET /trace HTTP/1.1\r\nHost: 127.0.0.1:7290\r\nSec-Fetch-Site: cross-site"))?
                .status == 403, "an <img> of another site sends no Origin, but says where it comes from")
        #expect(
            access.readRefusal(
                try Self.request("GET / HTTP/1.1\r\nHost: 127.0.0.1:7290\r\nSec-Fetch-Site: none")) == nil,
            "typed into the address bar")
        #expect(throws: HTTPError(400, "Host is given twice")) {
            try Self.request("GET / HTTP/1.1\r\nHost: evil.example:7290\r\nHost: 127.0.0.1:7290")
        }
    }

    @Test("with a token file, reading needs the token: cookie, header or ?token=")
    func tokenReading() throws {
        let access = ConsoleAccess(
            token: "t0ken-t0ken-t0ken", tokenForReading: true, address: "10.0.0.5:7290", loopback: false)
        #expect(
            access.readRefusal(try Self.request("GET / HTTP/1.1\r\nHost: console.lan:7290"))?.status == 401)
        #expect(
            access.readRefusal(try Self.request("GET /?token=t0ken-t0ken-t0ken HTTP/1.1\r\nHost: h")) == nil)
        #expect(
            access.readRefusal(
                try Self.request("GET / HTTP/1.1\r\nHost: h\r\nCookie: lifeline_console=t0ken-t0ken-t0ken"))
                == nil)
        #expect(
            access.readRefusal(
                try Self.request("GET / HTTP/1.1\r\nHost: h\r\nCookie: lifeline_console=t0ken"))?.status
                == 401)
        #expect(
            access.readRefusal(
                try Self.request("GET / HTTP/1.1\r\nHost: h\r\nX-Lifeline-Token: t0ken-t0ken-t0ken")) == nil)
        // A stale cookie (the token file changed) does not hide the right token given another way.
        #expect(
            access.readRefusal(
                try Self.request(
                    "GET /?token=t0ken-t0ken-t0ken HTTP/1.1\r\nHost: h\r\nCookie: lifeline_console=stale-stale-stale"
                )) == nil)
        #expect(
            access.readRefusal(
                try Self.request(
                    "GET / HTTP/1.1\r\nHost: h\r\nCookie: lifeline_console=stale; lifeline_console=t0ken-t0ken-t0ken"
                )) == nil)
    }

    @Test("an action is a POST with the page's token, from this console's origin")
    func acting() throws {
        let access = ConsoleAccess(
            token: "t0ken-t0ken-t0ken", tokenForReading: false, address: "127.0.0.1:7290", loopback: true)
        let host = "Host: 127.0.0.1:7290\r\n"
        #expect(
            access.actionRefusal(
                try Self.request(
                    "POST /api/action HTTP/1.1\r\n\(host)X-Lifeline-Token: t0ken-t0ken-t0ken\r\nOrigin: http://127.0.0.1:7290"
                ))
                == nil)
        #expect(access.actionRefusal(try Self.request("POST /api/action HTTP/1.1\r\n\(host)"))?.status == 403)
        #expect(
            access.actionRefusal(
                try Self.request(
                    "POST /api/action HTTP/1.1\r\n\(host)X-Lifeline-Token: t0ken-t0ken-t0ken\r\nOrigin: http://evil.example"
                ))?
                .message
                == "a request from another site (http://evil.example) may not act through this console")
        #expect(
            access.actionRefusal(
                try Self.request("GET /api/action HTTP/1.1\r\n\(host)X-Lifeline-Token: t0ken-t0ken-t0ken"))?
                .status == 405)
    }

    @Test(
        "an action line is split as a shell splits words; unknown commands and the console's own options are refused"
    )
    func actionArguments() throws {
        #expect(
            try ShellWords.split(#"action login signIn '{"user": "ana"}' "a \"b\"" c\ d"#)
                == ["action", "login", "signIn", #"{"user": "ana"}"#, #"a "b""#, "c d"])
        #expect(try ShellWords.split("  ") == [])
        #expect(try ShellWords.split("''") == [""])
        #expect(throws: ShellWords.Unterminated(quote: "'")) { try ShellWords.split("a 'b") }
        #expect(
            try ConsoleActions.arguments(fromBody: Array(#"{"command": "call", "line": "push status"}"#.utf8))
                == ["call", "push", "status"])
        #expect(
            throws: HTTPError(400, "unknown action 'broker'; actions: publish, call, apps, dispatch, boot")
        ) {
            try ConsoleActions.arguments(fromBody: Array(#"{"command": "broker", "line": ""}"#.utf8))
        }
        #expect(throws: HTTPError(400, "--broker is the console's own: an action uses its broker and keys")) {
            try ConsoleActions.arguments(
                fromBody: Array(#"{"command": "publish", "line": "x --broker=tcp://a:1"}"#.utf8))
        }
        #expect(throws: HTTPError(400, "the double quote is not closed")) {
            try ConsoleActions.arguments(fromBody: Array(#"{"command": "publish", "line": "x \"y"}"#.utf8))
        }
        // A NUL ends an argument in the child's argv: "--svg\0 FILE" would pass as another word.
        #expect(throws: HTTPError(400, "an action's words may not hold control characters")) {
            try ConsoleActions.arguments(
                fromBody: Array(#"{"command": "boot", "line": "report --svg\u0000 /tmp/x"}"#.utf8))
        }
        #expect(
            throws: HTTPError(400, "an action's 'line' is a string of the command's arguments, not number")
        ) {
            try ConsoleActions.arguments(fromBody: Array(#"{"command": "publish", "line": 5}"#.utf8))
        }
        #expect(
            throws: HTTPError(400, "an action is a JSON object {\"command\": …, \"line\": …}, not array")
        ) {
            try ConsoleActions.arguments(fromBody: Array("[]".utf8))
        }
    }

    @Test("the page escapes its token and nothing else of it comes from outside")
    func escaping() {
        #expect(ConsoleAssets.escape(#"<a href="x">&'"#) == "&lt;a href=&quot;x&quot;&gt;&amp;&#39;")
        #expect(ConsoleAssets.page(token: "abc").contains(#"<meta name="lifeline-token" content="abc">"#))
        #expect(!ConsoleAssets.script.contains("innerHTML"))
        #expect(!ConsoleAssets.script.contains("insertAdjacentHTML"))
    }
}
