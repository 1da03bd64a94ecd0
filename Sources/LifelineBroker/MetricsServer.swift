import Foundation
import Glibc
import LifelineSupport
import Synchronization

/// A small HTTP/1.1 responder on its own thread for Prometheus: `GET /metrics` answers the
/// broker's counters in the text exposition format (asked of the broker's thread each time);
/// anything else is 404 or 405. With a token, a request without `Authorization: Bearer TOKEN` gets
/// 401 once its head is read, before anything else is said about it. One request per connection
/// (`Connection: close`).
final class MetricsServer: Sendable {
    /// The address actually bound, `HOST:PORT`.
    var address: String { listener.address }
    private let listener: HTTPListener

    /// Binds `address` (`HOST:PORT`; port 0 picks one) and serves from a new thread; `render`
    /// produces the body (nil: the broker did not answer in time); `token`, when given, is the bearer
    /// token every request must carry.
    init(address: String, token: String? = nil, render: @escaping @Sendable () -> String?) throws {
        // Without a token the server is on loopback: a page served under another name (DNS
        // rebinding) may not read it.
        let checksHost = token == nil && BrokerConfiguration.isLoopback("tcp://" + address)
        // The host it was given answers too (127.0.0.2 with --insecure, say).
        let given = address.split(separator: ":").dropLast().joined(separator: ":").lowercased()
        do {
            listener = try HTTPListener(address: address, threadName: "ll-metrics") { client in
                Self.serve(client, token: token, checksHost: checksHost, given: given, render: render)
                close(client)
            }
        } catch {
            throw SecurityError("--metrics: \(error.message)")
        }
    }

    /// Stops accepting (the thread ends).
    func stop() { listener.stop() }

    private static func serve(
        _ client: Int32, token: String?, checksHost: Bool, given: String, render: @Sendable () -> String?
    ) {
        let request: HTTPRequest
        do {
            request = try HTTPRequest.read(from: client, maxBody: 0, timeoutSeconds: 2) { request in
                if let token, !Self.authorizes(request, token: token) {
                    return HTTPError(401, "/metrics needs the header 'Authorization: Bearer TOKEN'")
                }
                if checksHost, let port = HTTPListener.localPort(of: client) {
                    // Host names are case-insensitive; without a port, the scheme's default is meant.
                    let host = (request.header("host") ?? "").lowercased()
                    let names = Set(["127.0.0.1", "localhost", "[::1]", given]).sorted()
                    guard names.contains(host) || names.map({ "\($0):\(port)" }).contains(host) else {
                        return HTTPError(
                            421,
                            "/metrics answers only to Host 127.0.0.1:\(port), localhost:\(port) or [::1]:\(port), not '\(host)'"
                        )
                    }
                }
                return nil
            }
        } catch {
            var refusal = HTTPResponse.text(error.status, error.message)
            if error.status == 401 {
                refusal.headers.append(("WWW-Authenticate", "Bearer realm=\"lifeline\""))
            }
            refusal.send(to: client)
            return
        }
        let response: HTTPResponse
        if request.method != "GET" && request.method != "HEAD" {
            response = .text(405, "only GET /metrics")
        } else if request.path != "/metrics" {
            response = .text(404, "only /metrics is served here")
        } else if let text = render() {
            response = HTTPResponse(
                status: 200, headers: [("Content-Type", "text/plain; version=0.0.4; charset=utf-8")],
                body: Array(text.utf8))
        } else {
            response = .text(503, "the broker did not answer in time")
        }
        response.send(to: client, includingBody: request.method != "HEAD")
    }
}

extension MetricsServer {
    /// True when the request carries `Authorization: Bearer TOKEN` with this token (compared in
    /// constant time).
    static func authorizes(_ request: HTTPRequest, token: String) -> Bool {
        guard let value = request.header("authorization"), value.count > 7,
            value.prefix(7).lowercased() == "bearer "
        else { return false }
        return HTTPResponse.secretsMatch(value.dropFirst(7).trimmingCharacters(in: .whitespaces), token)
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
