import Foundation
import Glibc
import LifelineProtocol
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// `lifeline console` against a broker, started as a real process and waited for with its READY line.
struct ConsoleProcess {
    let process: ChildProcess
    /// The page's address, from the READY line.
    let url: String

    init(broker: String, _ extra: [String] = [], listen: String = "127.0.0.1:0") async throws {
        process = try ChildProcess("lifeline", ["console", "--broker", broker, "--listen", listen] + extra)
        url = String(try await process.waitForLine(startingWith: "READY ").dropFirst(6))
    }

    /// One request to the console: its status, headers and body.
    func fetch(_ path: String, method: String = "GET", headers: [String: String] = [:], body: String? = nil)
        async throws -> (status: Int, headers: [String: String], body: String)
    {
        var request = URLRequest(url: URL(string: url + path.dropFirst())!)
        request.httpMethod = method
        request.timeoutInterval = 30
        for (name, value) in headers { request.setValue(value, forHTTPHeaderField: name) }
        request.httpBody = body.map { Data($0.utf8) }
        let (data, response) = try await URLSession.shared.data(for: request)
        let http = response as? HTTPURLResponse
        let fields = (http?.allHeaderFields ?? [:]).reduce(into: [String: String]()) {
            $0[String(describing: $1.key).lowercased()] = String(describing: $1.value)
        }
        return (http?.statusCode ?? 0, fields, String(decoding: data, as: UTF8.self))
    }

    /// The token the page carries for its actions.
    func pageToken() async throws -> String {
        let page = try await fetch("/").body
        guard let start = page.range(of: #"name="lifeline-token" content=""#)?.upperBound,
            let end = page[start...].firstIndex(of: "\"")
        else { throw HarnessError("the page has no token") }
        return String(page[start..<end])
    }

    /// Runs an action as the page does; returns the HTTP status and the outcome's JSON (or the refusal's text).
    func act(_ command: String, _ line: String, token: String?) async throws -> (
        status: Int, outcome: JSONValue
    ) {
        let reply = try await fetch(
            "/api/action", method: "POST",
            headers: ["Content-Type": "application/json"].merging(
                token.map { ["X-Lifeline-Token": $0] } ?? [:]
            ) {
                $1
            },
            body: String(
                decoding: JSONWriter.encode(["command": .string(command), "line": .string(line)]),
                as: UTF8.self))
        return (reply.status, (try? JSONParser.parse(Array(reply.body.utf8))) ?? .string(reply.body))
    }
}

@Suite("Real processes: lifeline console over HTTP", .serialized, .timeLimit(.minutes(2)))
struct ConsoleTests {
    @Test("the page and its assets come from the binary, with a policy that runs only its own script")
    func page() async throws {
        let broker = try await BrokerProcess()
        let push = try await broker.service("lifeline-push")
        let console = try await ConsoleProcess(broker: broker.control)
        defer { for child in [console.process, push, broker.process] { child.kill() } }
        let page = try await console.fetch("/")
        #expect(page.status == 200)
        #expect(page.headers["content-security-policy"]?.contains("script-src 'self'") == true)
        #expect(page.headers["content-type"] == "text/html; charset=utf-8")
        #expect(page.body.contains(#"<script src="/console.js" defer></script>"#))
        #expect(
            !page.body.contains("http://") && !page.body.contains("https://"), "no asset from the network")
        let script = try await console.fetch("/console.js")
        #expect(script.status == 200 && script.body.contains("new EventSource(\"/events\")"))
        #expect(try await console.fetch("/console.css").status == 200)
        #expect(try await console.fetch("/nothing").status == 404)
        // The views are asked of the broker: the push service is in the registry.
        var state = JSONValue.null
        for _ in 0..<50 {
            state = try JSONParser.parse(Array(try await console.fetch("/api/state").body.utf8))
            // Each view is asked of the broker on its own: wait until all three have arrived.
            if state["services"]?["services"]?.arrayValue?.contains(where: { $0["name"] == "push" }) == true,
                state["stack"]?["stack"] != nil, state["boot"]?["text"]?.stringValue?.isEmpty == false
            {
                break
            }
            try await Task.sleep(for: .milliseconds(100))  // polling the console's view with a deadline
        }
        #expect(state["services"]?["services"]?.arrayValue?.first?["state"] == "up", "\(state)")
        #expect(state["stack"]?["stack"] != nil)
        #expect(state["boot"]?["text"]?.stringValue?.isEmpty == false)
        let svg = try await console.fetch("/api/boot.svg")
        #expect(svg.status == 200 && svg.headers["content-type"] == "image/svg+xml")
    }

    @Test(
        "actions run as the CLI's: its validation, its sentences, its exit status; without the token they are refused"
    )
    func actions() async throws {
        let broker = try await BrokerProcess()
        let push = try await broker.service("lifeline-push")
        let console = try await ConsoleProcess(broker: broker.control)
        defer { for child in [console.process, push, broker.process] { child.kill() } }
        let token = try await console.pageToken()
        let published = try await console.act("publish", "com.example.fromConsole note=hi", token: token)
        #expect(published.status == 200)
        #expect(published.outcome["status"] == 0)
        #expect(
            published.outcome["output"]?.stringValue?.hasPrefix("published com.example.fromConsole #") == true
        )
        let unknown = try await console.act("publish", "didBecomeActiv", token: token)
        #expect(unknown.outcome["status"] == 2)
        #expect(
            unknown.outcome["error"]?.stringValue?.contains("didBecomeActive") == true, "\(unknown.outcome)")
        let call = try await console.act("call", "push status", token: token)
        #expect(call.outcome["status"] == 0, "\(call.outcome)")
        let missing = try await console.act("call", "nobody status", token: token)
        #expect(missing.outcome["status"] == 1)
        #expect(missing.outcome["error"]?.stringValue?.contains("nobody") == true, "\(missing.outcome)")
        let noToken = try await console.act("publish", "com.example.x", token: nil)
        #expect(noToken.status == 403)
        let wrongToken = try await console.act("publish", "com.example.x", token: "0123456789abcdef")
        #expect(wrongToken.status == 403)
        let crossSite = try await console.fetch(
            "/api/action", method: "POST",
            headers: [
                "X-Lifeline-Token": token, "Origin": "http://evil.example",
                "Content-Type": "application/json",
            ],
            body: #"{"command": "publish", "line": "com.example.x"}"#)
        #expect(crossSite.status == 403 && crossSite.body.contains("another site"))
        let reserved = try await console.act(
            "publish", "com.example.x --broker tcp://127.0.0.1:1", token: token)
        #expect(reserved.status == 400)
        let notAction = try await console.act("keys", "new x", token: token)
        #expect(notAction.status == 400)
        // No action writes on the console's host: `boot report --svg PATH` is refused, nothing written.
        let path = FileManager.default.temporaryDirectory.appendingPathComponent(
            "console-\(UUID().uuidString).svg")
        for line in ["report --svg \(path.path)", "report --svg=\(path.path)"] {
            let writing = try await console.act("boot", line, token: token)
            #expect(writing.status == 400, "\(writing.outcome)")
            #expect(writing.outcome.stringValue?.contains("writes a file") == true, "\(writing.outcome)")
        }
        #expect(!FileManager.default.fileExists(atPath: path.path))
    }

    @Test(
        "an action whose client hangs up is stopped and frees its place: eight held take every place (429), closed they free them"
    )
    func abandonedActions() async throws {
        let broker = try await BrokerProcess()
        let slow = try await broker.service("lifeline-probe", ["--name", "slow", "--replicable"])
        let console = try await ConsoleProcess(broker: broker.control)
        defer { for child in [console.process, slow, broker.process] { child.kill() } }
        let token = try await console.pageToken()
        let authority = String(console.url.dropFirst("http://".count).dropLast())
        let port = UInt16(authority.split(separator: ":").last ?? "") ?? 0
        let body = #"{"command": "call", "line": "slow sleep ms:=60000 --timeout 60s"}"#
        let request =
            "POST /api/action HTTP/1.1\r\nHost: \(authority)\r\nX-Lifeline-Token: \(token)\r\n"
            + "Content-Type: application/json\r\nContent-Length: \(body.utf8.count)\r\n\r\n\(body)"
        var held: [Int32] = []
        defer { for descriptor in held { close(descriptor) } }
        for _ in 0..<8 {
            let descriptor = try #require(LoopbackTCP.connect(port: port, receiveTimeoutSeconds: 60))
            let bytes = Array(request.utf8)
            _ = bytes.withUnsafeBytes { send(descriptor, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            held.append(descriptor)
        }
        // Readiness: the eight calls have reached the service (its instance's calls in flight).
        var inFlight: JSONValue?
        for _ in 0..<600 where inFlight != 8 {
            let lookup = try await broker.cli(["lookup", "slow", "--json"])
            inFlight = (try? JSONParser.parse(lookup.output))?["instances"]?.arrayValue?.first?["inFlight"]
            if inFlight != 8 { try await Task.sleep(for: .milliseconds(100)) }  // polling with a bound
        }
        #expect(inFlight == 8, "the eight actions' calls reached the service")
        let refused = try await console.act("publish", "com.example.x", token: token)
        #expect(refused.status == 429, "eight held actions take every place: \(refused)")
        for descriptor in held { close(descriptor) }
        held.removeAll()
        let closed = ContinuousClock.now
        var admitted: (status: Int, outcome: JSONValue) = (429, .null)
        for _ in 0..<1200 where admitted.status == 429 {
            admitted = try await console.act("publish", "com.example.x", token: token)
            // Polling with a bound.
            if admitted.status == 429 { try await Task.sleep(for: .milliseconds(50)) }
        }
        #expect(admitted.status == 200 && admitted.outcome["status"] == 0, "\(admitted)")
        print("places freed \(ContinuousClock.now - closed) after the clients hung up (the calls wait 60 s)")
    }

    @Test("a request head over 16 KiB is refused 431 however it arrives: in one write, or in pieces")
    func headLimit() async throws {
        let broker = try await BrokerProcess()
        let console = try await ConsoleProcess(broker: broker.control)
        defer { for child in [console.process, broker.process] { child.kill() } }
        let authority = String(console.url.dropFirst("http://".count).dropLast())
        let port = UInt16(authority.split(separator: ":").last ?? "") ?? 0
        for size in [20_000, 24_500, 17_000] {
            let head =
                "GET / HTTP/1.1\r\nHost: \(authority)\r\nX-Padding: \(String(repeating: "a", count: size))\r\n\r\n"
            let answer = try RawHTTP.exchange(port: port, Array(head.utf8))
            #expect(answer.hasPrefix("HTTP/1.1 431"), "a head of \(size) bytes: \(answer.prefix(60))")
        }
        let small = try RawHTTP.exchange(
            port: port, Array("GET / HTTP/1.1\r\nHost: \(authority)\r\n\r\n".utf8))
        #expect(small.hasPrefix("HTTP/1.1 200"), "\(small.prefix(60))")
    }

    @Test("beyond loopback it needs a token file; with one, reading needs the token too")
    func token() async throws {
        let refused = try await CLIResult.run([
            "console", "--listen", "0.0.0.0:0", "--broker", "tcp://127.0.0.1:1",
        ])
        #expect(refused.status == 2)
        #expect(refused.errors.contains("give --token-file FILE"), "\(refused.errors)")
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "console-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let short = directory.appendingPathComponent("short").path
        _ = FileManager.default.createFile(
            atPath: short, contents: Data("abc\n".utf8), attributes: [.posixPermissions: 0o600])
        let weak = try await CLIResult.run([
            "console", "--token-file", short, "--broker", "tcp://127.0.0.1:1",
        ])
        #expect(weak.status == 2 && weak.errors.contains("at least 16"), "\(weak.errors)")
        let file = directory.appendingPathComponent("token").path
        _ = FileManager.default.createFile(
            atPath: file, contents: Data("s3cret-console-token\n".utf8),
            attributes: [.posixPermissions: 0o644])
        let readable = try await CLIResult.run([
            "console", "--token-file", file, "--broker", "tcp://127.0.0.1:1",
        ])
        #expect(
            readable.status == 2 && readable.errors.contains("may be read by others"),
            "a token file others may read is refused, as key files are: \(readable.errors)")
        chmod(file, 0o600)
        let broker = try await BrokerProcess()
        let console = try await ConsoleProcess(broker: broker.control, ["--token-file", file])
        defer { for child in [console.process, broker.process] { child.kill() } }
        #expect(try await console.fetch("/").status == 401)
        #expect(try await console.fetch("/api/state").status == 401)
        #expect(
            try await console.fetch("/", headers: ["X-Lifeline-Token": "s3cret-console-token"]).status == 200)
        let opened = try await console.fetch("/?token=s3cret-console-token")
        #expect(opened.status == 200, "the redirect to / is followed with the cookie it set")
        #expect(opened.body.contains("lifeline-token"))
    }
}

/// One HTTP exchange over a plain TCP socket: the bytes written in one `send`, the answer read
/// until the server closes (or 10 s pass).
enum RawHTTP {
    static func exchange(port: UInt16, _ request: [UInt8]) throws -> String {
        guard let descriptor = LoopbackTCP.connect(port: port, receiveTimeoutSeconds: 10) else {
            throw HarnessError("cannot connect to port \(port)")
        }
        defer { close(descriptor) }
        let sent = request.withUnsafeBytes { send(descriptor, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
        guard sent == request.count else { throw HarnessError("sent \(sent) of \(request.count) bytes") }
        var answer: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = buffer.withUnsafeMutableBytes { recv(descriptor, $0.baseAddress, $0.count, 0) }
            guard count > 0 else { break }
            answer += buffer[0..<count]
        }
        return String(decoding: answer, as: UTF8.self)
    }
}

/// A TCP connection to a port on 127.0.0.1, for tests that speak HTTP over a plain socket.
enum LoopbackTCP {
    /// The connected socket's descriptor (receives time out after `receiveTimeoutSeconds`), or nil
    /// when nothing listens there.
    static func connect(port: UInt16, receiveTimeoutSeconds: Int) -> Int32? {
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard descriptor >= 0 else { return nil }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                Glibc.connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0
            }
        }
        guard connected else {
            close(descriptor)
            return nil
        }
        var timeout = timeval(tv_sec: receiveTimeoutSeconds, tv_usec: 0)
        setsockopt(descriptor, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        return descriptor
    }
}
