import Foundation
import Lifeline
import LifelineProtocol
import Testing

@Suite("Real processes: lifeline stats and the Prometheus endpoint", .serialized, .timeLimit(.minutes(1)))
struct MetricsTests {
    /// `GET path` (or another method, with a body) on 127.0.0.1:`port` with a bare socket:
    /// (status line, body).
    static func get(
        port: UInt16, _ path: String, headers: [String] = [], method: String = "GET", body: String = "",
        host: String = "localhost"
    ) throws -> (String, String) {
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(descriptor) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        inet_pton(AF_INET, "127.0.0.1", &address.sin_addr)
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard connected == 0 else { throw HarnessError("cannot connect to 127.0.0.1:\(port)") }
        let extra = headers.map { $0 + "\r\n" }.joined()
        let length = body.isEmpty ? "" : "Content-Length: \(body.utf8.count)\r\n"
        let request = Array(
            "\(method) \(path) HTTP/1.1\r\nHost: \(host)\r\n\(extra)\(length)\r\n\(body)".utf8)
        _ = request.withUnsafeBytes { send(descriptor, $0.baseAddress, $0.count, 0) }
        var response: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65_536)
        while true {
            let count = buffer.withUnsafeMutableBytes { recv(descriptor, $0.baseAddress, $0.count, 0) }
            if count <= 0 { break }
            response += buffer[0..<count]
        }
        let text = String(decoding: response, as: UTF8.self)
        guard let split = text.range(of: "\r\n\r\n") else { throw HarnessError("no HTTP header end") }
        return (
            String(text[..<split.lowerBound].split(separator: "\r\n")[0]), String(text[split.upperBound...])
        )
    }

    @Test("calls are counted by service and method; /metrics serves every counter in the exposition format")
    func statsAndScrape() async throws {
        let broker = try await BrokerProcess(["--metrics", "127.0.0.1:0"])
        defer { broker.process.kill() }
        let line = try await broker.process.waitForLine(.stderr) {
            $0.contains("Prometheus metrics on http://")
        }
        let port = try #require(UInt16(line.split(separator: ":").last?.split(separator: "/").first ?? ""))
        let url = try await broker.service("lifeline-url")
        defer { url.kill() }
        for _ in 0..<3 {
            #expect(try await broker.cli(["call", "url", "resolve", #"{"url":"app://topup"}"#]).status == 0)
        }
        #expect(try await broker.cli(["publish", "openURL", "url=app://x"]).status == 0)
        let stats = try await broker.cli(["stats", "url", "--json"])
        let report = try JSONParser.parse(stats.output)
        #expect(
            report["broker"] != nil && report["services"]?.objectValue?.keys.sorted() == ["url"], "one shape")
        let resolve = report["services"]?["url"]?["methods"]?["resolve"]
        #expect(resolve?["requests"] == 3 && resolve?["errors"] == 0)
        #expect(resolve?["p99Ms"]?.doubleValue != nil)
        let table = try await broker.cli(["stats"])
        #expect(table.stdout.first?.hasPrefix("broker: up") == true)
        #expect(table.stdout.contains { $0.hasPrefix("url") && $0.contains("resolve") })

        let (status, body) = try Self.get(port: port, "/metrics")
        #expect(status == "HTTP/1.1 200 OK")
        #expect(
            try Self.get(port: port, "/metrics", host: "attacker.example:\(port)").0
                == "HTTP/1.1 421 Misdirected Request",
            "a page under another name (DNS rebinding) reads nothing")
        var types: [String: String] = [:]
        var problems: [String] = []
        let name = #/^[a-zA-Z_:][a-zA-Z0-9_:]*/#
        for line in body.split(separator: "\n").map(String.init) {
            if line.hasPrefix("# HELP ") { continue }
            if line.hasPrefix("# TYPE ") {
                let parts = line.split(separator: " ")
                guard parts.count == 4, ["counter", "gauge", "histogram"].contains(parts[3]) else {
                    problems.append(line)
                    continue
                }
                types[String(parts[2])] = String(parts[3])
                continue
            }
            guard let match = line.firstMatch(of: name) else {
                problems.append(line)
                continue
            }
            let metric = String(match.output)
            let family = ["_bucket", "_sum", "_count"].reduce(metric) { family, suffix in
                types[family] == nil && family.hasSuffix(suffix)
                    ? String(family.dropLast(suffix.count)) : family
            }
            let value = line.split(separator: " ").last.map(String.init) ?? ""
            if types[family] == nil || (Double(value) == nil && value != "+Inf") { problems.append(line) }
            if types[family] == "counter" && !family.hasSuffix("_total") { problems.append(line) }
        }
        #expect(problems.isEmpty, "every line parses: \(problems)")
        #expect(body.contains(#"lifeline_call_requests_total{service="url",method="resolve"} 3"#))
        #expect(body.contains(#"lifeline_call_duration_seconds_count{service="url",method="resolve"} 3"#))
        #expect(body.contains(#"lifeline_event_published_total{event="openURL"} 1"#))
        #expect(try Self.get(port: port, "/other").0 == "HTTP/1.1 404 Not Found")

        // Services report what their handlers ran in their heartbeats (every second here).
        let deadline = ContinuousClock.now + .seconds(10)
        var handled: JSONValue?
        while ContinuousClock.now < deadline {
            handled = try JSONParser.parse(try await broker.cli(["stats", "url", "--json"]).output)[
                "services"]?[
                    "url"]?["handled"]
            if handled?["openURL"] == 1 { break }
            try await Task.sleep(for: .milliseconds(100))  // polling with a deadline
        }
        #expect(handled?["openURL"] == 1, "the url service ran its openURL handler once")
        let scrape = try Self.get(port: port, "/metrics").1
        #expect(scrape.contains(#"lifeline_service_events_handled_total{service="url",event="openURL"} 1"#))
        #expect(scrape.contains(#"lifeline_service_queue_depth{service="url"} 0"#))
    }

    @Test(
        "/metrics off loopback needs a token (or --insecure); with one, a request without it gets 401 (whatever its method or body)"
    )
    func metricsToken() async throws {
        let exposed = try await CLIResult.run(["broker", "--metrics", "0.0.0.0:0"])
        #expect(
            exposed.status == 2
                && exposed.errors.contains("refusing to serve /metrics on 0.0.0.0:0 without a token"))
        let malformed = try await CLIResult.run(["broker", "--metrics", "notanaddr"])
        #expect(
            malformed.status == 2
                && malformed.errors.contains(
                    "--metrics expects HOST:PORT, e.g. 127.0.0.1:9464, not 'notanaddr'")
        )
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "lifeline-token-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let tokenFile = directory.appendingPathComponent("token").path
        _ = FileManager.default.createFile(
            atPath: tokenFile, contents: Data("s3cret\n".utf8), attributes: [.posixPermissions: 0o644])
        let loose = try await CLIResult.run([
            "broker", "--metrics", "0.0.0.0:0", "--metrics-token", tokenFile,
        ])
        #expect(loose.status == 2 && loose.errors.contains("may be read by others than its owner (mode 644)"))
        chmod(tokenFile, 0o600)
        let short = try await CLIResult.run([
            "broker", "--metrics", "0.0.0.0:0", "--metrics-token", tokenFile,
        ])
        #expect(
            short.status == 2 && short.errors.contains("at least 16 printable characters"), "\(short.errors)")
        try Data("s3cret-0123456789abcdef\n".utf8).write(to: URL(fileURLWithPath: tokenFile))
        let broker = try await BrokerProcess(["--metrics", "0.0.0.0:0", "--metrics-token", tokenFile])
        defer { broker.process.kill() }
        let line = try await broker.process.waitForLine(.stderr) {
            $0.contains("Prometheus metrics on http://")
        }
        let port = try #require(UInt16(line.split(separator: ":").last?.split(separator: "/").first ?? ""))
        #expect(try Self.get(port: port, "/metrics").0 == "HTTP/1.1 401 Unauthorized")
        #expect(
            try Self.get(port: port, "/metrics", headers: ["Authorization: Bearer wrong"]).0
                == "HTTP/1.1 401 Unauthorized")
        #expect(
            try Self.get(port: port, "/metrics", method: "POST", body: "hello").0
                == "HTTP/1.1 401 Unauthorized",
            "a stranger hears nothing about methods or bodies")
        let (status, body) = try Self.get(
            port: port, "/metrics", headers: ["Authorization: Bearer s3cret-0123456789abcdef"])
        #expect(status == "HTTP/1.1 200 OK" && body.contains("lifeline_events_published_total"))
    }
}
