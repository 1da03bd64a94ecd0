import Foundation
import Glibc
import LifelineProtocol
import LifelineSupport

/// A headless Chromium, driven through Debian's chromedriver (the W3C WebDriver protocol over HTTP).
final class Browser: @unchecked Sendable {
    static let driverPath = "/usr/bin/chromedriver"
    /// True when chromium and chromedriver are installed (`deploy/test.sh` installs them when root).
    static let available =
        FileManager.default.isExecutableFile(atPath: driverPath)
        && FileManager.default.isExecutableFile(atPath: "/usr/bin/chromium")

    private let driver: ChildProcess
    private let port: UInt16
    private var session = ""

    init() async throws {
        // chromedriver now and then exits before it listens when several start at once (a loaded
        // host): such a start is tried again, twice, before the test says so.
        var attempt = 1
        var started: (ChildProcess, String)?
        while started == nil {
            let driver = try ChildProcess(Self.driverPath, ["--port=0"])
            do {
                started = (
                    driver, try await driver.waitForLine { $0.contains("started successfully on port") }
                )
            } catch  where attempt < 3 {
                print(
                    "chromedriver exited before it listened (\(driver.lines(.stderr).suffix(3))); starting it again"
                )
                driver.kill()
                attempt += 1
            }
        }
        guard let (driver, line) = started else { throw HarnessError("chromedriver did not start") }
        self.driver = driver
        port =
            UInt16(line.split(separator: " ").last?.trimmingCharacters(in: .punctuationCharacters) ?? "") ?? 0
        let capabilities: JSONValue = [
            "capabilities": [
                "alwaysMatch": [
                    "goog:chromeOptions": [
                        "args": [
                            "--headless=new", "--no-sandbox", "--disable-gpu", "--window-size=1400,1800",
                        ]
                    ],
                    "goog:loggingPrefs": ["browser": "ALL"],
                ]
            ]
        ]
        session = try await command("POST", "/session", capabilities)["sessionId"]?.stringValue ?? ""
        guard !session.isEmpty else { throw HarnessError("chromedriver made no session") }
    }

    /// Sends one WebDriver command; returns its `value`.
    @discardableResult
    func command(_ method: String, _ path: String, _ body: JSONValue? = nil) async throws -> JSONValue {
        let data = try Self.exchange(
            port: port, method: method, path: path, body: body.map { JSONWriter.encode($0) } ?? [])
        let reply = try JSONParser.parse(data)
        if let error = reply["value"]?["error"]?.stringValue {
            throw HarnessError(
                "WebDriver \(path): \(error): \(reply["value"]?["message"]?.stringValue ?? "")")
        }
        return reply["value"] ?? .null
    }

    /// One HTTP/1.1 exchange with chromedriver over a plain socket of its own; returns the reply's body.
    private static func exchange(port: UInt16, method: String, path: String, body: [UInt8]) throws -> [UInt8]
    {
        guard let descriptor = LoopbackTCP.connect(port: port, receiveTimeoutSeconds: 60) else {
            throw HarnessError("chromedriver is not listening on \(port)")
        }
        defer { Glibc.close(descriptor) }
        let head =
            "\(method) \(path) HTTP/1.1\r\nHost: localhost:\(port)\r\nContent-Type: application/json\r\nContent-Length: \(body.count)\r\n\r\n"
        guard HTTPResponse.write(Array(head.utf8) + body, to: descriptor) else {
            throw HarnessError("chromedriver closed the connection")
        }
        var reply: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65_536)
        var expected: Int?
        while expected.map({ reply.count < $0 }) ?? true {
            let count = buffer.withUnsafeMutableBytes { recv(descriptor, $0.baseAddress, $0.count, 0) }
            if count <= 0 { throw HarnessError("chromedriver did not answer \(method) \(path)") }
            reply += buffer[0..<count]
            if expected == nil, let end = HTTPRequest.endOfHead(in: reply) {
                let lines = String(decoding: reply[..<end], as: UTF8.self).lowercased().split(
                    separator: "\r\n")
                let length = lines.first { $0.hasPrefix("content-length:") }.flatMap {
                    Int($0.dropFirst(15).trimmingCharacters(in: .whitespaces))
                }
                guard let length else { throw HarnessError("chromedriver's reply has no Content-Length") }
                reply.removeFirst(end + 4)
                expected = length
            }
        }
        return reply
    }

    private var sessionPath: String { "/session/\(session)" }

    /// Loads `url` and waits for it.
    func open(_ url: String) async throws {
        try await command("POST", "\(sessionPath)/url", ["url": .string(url)])
    }

    /// Runs `script` (a function body) in the page; returns what it returns.
    @discardableResult
    func run(_ script: String, _ arguments: [JSONValue] = []) async throws -> JSONValue {
        try await command(
            "POST", "\(sessionPath)/execute/sync", ["script": .string(script), "args": .array(arguments)])
    }

    /// Polls `script` until it returns something other than null, false, "" or 0; throws after `seconds`,
    /// saying `what` it waited for. The default is generous: on a loaded machine the page waits for
    /// its next refresh, and an action for a `lifeline` process to start and finish.
    @discardableResult
    func waitFor(_ what: String, seconds: Double = 30, _ script: String, _ arguments: [JSONValue] = [])
        async throws -> JSONValue
    {
        let deadline = ContinuousClock.now + .seconds(seconds)
        while true {
            let value = try await run(script, arguments)
            if value != .null && value != false && value != "" && value != 0 { return value }
            guard ContinuousClock.now < deadline else {
                throw HarnessError("the page did not show \(what) within \(seconds) s")
            }
            try await Task.sleep(for: .milliseconds(100))  // polling the page with a deadline
        }
    }

    /// The element `css` selects.
    func element(_ css: String) async throws -> String {
        let found = try await command(
            "POST", "\(sessionPath)/element", ["using": "css selector", "value": .string(css)])
        guard let id = found["element-6066-11e4-a52e-4f735466cecf"]?.stringValue else {
            throw HarnessError("no element \(css)")
        }
        return id
    }

    /// Types `text` into the element `css` selects, as a user's keys.
    func type(_ css: String, _ text: String) async throws {
        let id = try await element(css)
        try await command("POST", "\(sessionPath)/element/\(id)/clear", .emptyObject)
        try await command("POST", "\(sessionPath)/element/\(id)/value", ["text": .string(text)])
    }

    /// Clicks the element `css` selects.
    func click(_ css: String) async throws {
        let id = try await element(css)
        try await command("POST", "\(sessionPath)/element/\(id)/click", .emptyObject)
    }

    /// Runs an action from the console's form, as a user would (the command chosen, the arguments typed,
    /// Run clicked), waits for its exit status `status` and returns what the form shows.
    func runAction(_ command: String, _ line: String, expecting status: Int) async throws -> String {
        try await run(#"document.getElementById("action-command").value = arguments[0]"#, [.string(command)])
        try await type("#action-args", line)
        try await click("#action-run")
        let shown = try await waitFor(
            "the action's exit \(status)",
            #"const out = document.getElementById("action-output"); return out.dataset.status === arguments[0] ? out.textContent : null"#,
            [.string(String(status))])
        return shown.stringValue ?? ""
    }

    /// The browser's console messages at level SEVERE (script errors, failed loads) since the last call.
    func severeLogs() async throws -> [String] {
        let entries = try await command("POST", "\(sessionPath)/se/log", ["type": "browser"])
        return (entries.arrayValue ?? []).filter { $0["level"] == "SEVERE" }.compactMap {
            $0["message"]?.stringValue
        }
    }

    /// A PNG of the window.
    func screenshot() async throws -> Data {
        let text = try await command("GET", "\(sessionPath)/screenshot").stringValue ?? ""
        return Data(base64Encoded: text) ?? Data()
    }

    /// Runs `body` with a new browser and closes it after, whatever `body` does.
    static func with<T>(_ body: (Browser) async throws -> T) async throws -> T {
        let browser = try await Browser()
        do {
            let result = try await body(browser)
            await browser.close()
            return result
        } catch {
            await browser.close()
            throw error
        }
    }

    /// Ends the session and chromedriver.
    func close() async {
        _ = try? await command("DELETE", sessionPath)
        driver.kill()
    }
}
