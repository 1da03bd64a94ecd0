import Foundation
import Glibc
import LifelineProtocol
import LifelineSupport
import Synchronization

/// The console's HTTP side: the page and its assets, three event streams (Server-Sent Events),
/// the boot timeline, a JSON snapshot and the actions. Each connection has a thread of its own.
final class ConsoleServer: Sendable {
    let listener: HTTPListener
    let access: ConsoleAccess
    let state: ConsoleState
    let actions: ConsoleActions

    /// Binds `address` and serves at once.
    /// - Throws: ``HTTPError`` when the address cannot be bound.
    init(
        address: String, token: String, tokenForReading: Bool, state: ConsoleState, actions: ConsoleActions
    ) throws(HTTPError) {
        let box = ServerBox()
        listener = try HTTPListener(address: address, threadName: "ll-console-http") { client in
            box.server?.serve(client)
            close(client)
        }
        access = ConsoleAccess(
            token: token, tokenForReading: tokenForReading, address: listener.address,
            loopback: listener.isLoopback)
        self.state = state
        self.actions = actions
        box.server = self
    }

    /// The page's address.
    var url: String { "http://\(listener.address)/" }

    /// Headers every answer carries: nothing runs but this console's own script, nothing frames it.
    static let safety: [(name: String, value: String)] = [
        (
            "Content-Security-Policy",
            "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'"
        ),
        ("X-Content-Type-Options", "nosniff"), ("Referrer-Policy", "no-referrer"),
        ("Cache-Control", "no-store"),
    ]

    private func serve(_ client: Int32) {
        let request: HTTPRequest
        let access = access
        do {
            request = try HTTPRequest.read(from: client) { request in
                request.path == "/api/action" ? access.actionRefusal(request) : access.readRefusal(request)
            }
        } catch {
            respond(.text(error.status, error.message), to: client)
            return
        }
        let isAction = request.path == "/api/action"
        // A HEAD is answered as its GET, without the body.
        let isHead = request.method == "HEAD"
        if !isAction && request.method != "GET" && request.method != "HEAD" {
            respond(head: isHead, .text(405, "only GET here (actions are a POST to /api/action)"), to: client)
            return
        }
        switch request.path {
        case "/":
            if request.query["token"] != nil {
                // Opened once with its token: keep it in a cookie and drop it from the address bar.
                respond(
                    head: isHead,
                    HTTPResponse(
                        status: 303,
                        headers: [
                            ("Location", "/"),
                            (
                                "Set-Cookie",
                                "\(ConsoleAccess.cookie)=\(access.token); HttpOnly; SameSite=Strict; Path=/"
                            ),
                        ]), to: client)
                return
            }
            respond(
                head: isHead, asset(ConsoleAssets.page(token: access.token), "text/html; charset=utf-8"),
                to: client)
        case "/console.js":
            respond(head: isHead, asset(ConsoleAssets.script, "text/javascript; charset=utf-8"), to: client)
        case "/console.css":
            respond(head: isHead, asset(ConsoleAssets.style, "text/css; charset=utf-8"), to: client)
        case "/favicon.ico": respond(head: isHead, HTTPResponse(status: 204), to: client)
        case "/api/state": respond(head: isHead, json(snapshot()), to: client)
        case "/api/rates":
            let (end, values) = state.eventHistory(now: ConsoleFeed.now())
            respond(
                head: isHead,
                json([
                    "range": "1h", "step": 60, "points": .int(Int64(CounterHistory.minutes)),
                    "end": .int(end * 60_000),
                    "series": .object(values.mapValues { .array($0.map { .int(Int64($0)) }) }),
                ]), to: client)
        case "/api/service":
            do {
                let page = try ServicePage.view(
                    name: request.query["name"], range: request.query["range"], state: state,
                    now: ConsoleFeed.now())
                respond(head: isHead, json(page), to: client)
            } catch {
                respond(head: isHead, .text(error.status, error.message), to: client)
            }
        case "/api/boot.svg":
            let report = state.section("boot")?["report"] ?? ["state": "none"]
            respond(head: isHead, asset(BootTimeline.svg(report), "image/svg+xml"), to: client)
        case "/api/action": respond(head: isHead, act(request, client: client), to: client)
        case "/events": ConsoleStream(client: client, state: state, kind: .views).run(headOnly: isHead)
        case "/tail":
            ConsoleStream(client: client, state: state, kind: .tail(filter: request.query["filter"])).run(
                headOnly: isHead)
        case "/trace": ConsoleStream(client: client, state: state, kind: .trace).run(headOnly: isHead)
        default: respond(head: isHead, .text(404, "no page '\(request.path)' here: open /"), to: client)
        }
    }

    private func act(_ request: HTTPRequest, client: Int32) -> HTTPResponse {
        do {
            let arguments = try ConsoleActions.arguments(fromBody: request.body)
            return json(try actions.runIfRoom(arguments, for: client).json)
        } catch {
            return .text(error.status, error.message)
        }
    }

    /// Every view the console holds, as `GET /api/state` answers.
    func snapshot() -> JSONValue {
        .object(Dictionary(uniqueKeysWithValues: state.sections(after: 0).changed.map { ($0.0, $0.1) }))
    }

    private func asset(_ text: String, _ type: String) -> HTTPResponse {
        HTTPResponse(status: 200, headers: [("Content-Type", type)], body: Array(text.utf8))
    }

    private func json(_ value: JSONValue) -> HTTPResponse {
        HTTPResponse(
            status: 200, headers: [("Content-Type", "application/json")], body: JSONWriter.encode(value))
    }

    private func respond(head: Bool = false, _ response: HTTPResponse, to client: Int32) {
        var response = response
        response.headers += Self.safety
        _ = response.send(to: client, includingBody: !head)
    }
}

/// Lets the listener's handler reach the server it is part of, once the server is whole.
private final class ServerBox: Sendable {
    private let held = Mutex<ConsoleServer?>(nil)
    var server: ConsoleServer? {
        get { held.withLock { $0 } }
        set { held.withLock { $0 = newValue } }
    }
}
