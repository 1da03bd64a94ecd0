import Foundation
import Glibc
import LifelineSupport
import Synchronization

/// An HTTP peer that answers each connection as its script says, with the raw bytes given: for
/// testing a client against what real servers do (chunked bodies, connections kept open, errors,
/// silence). It records every request it read.
final class ScriptedHTTPPeer: Sendable {
    /// What the peer does with one connection, after reading its request.
    enum Step: Sendable {
        /// Writes `bytes` and closes.
        case answer([UInt8])
        /// Writes `bytes` and keeps the connection open until the peer stops.
        case answerKeepingOpen([UInt8])
        /// Writes `bytes` in two parts, 50 ms apart, and closes.
        case answerInTwoParts([UInt8], [UInt8])
        /// Answers nothing until the peer stops.
        case silence
        /// Closes without answering.
        case close
    }

    private struct State {
        var steps: [Step]
        var requests: [HTTPRequest] = []
        var held: [Int32] = []
    }

    /// The script and what happened, shared with the connection threads.
    private final class Shared: Sendable {
        let state: Mutex<State>
        init(_ steps: [Step]) { state = Mutex(State(steps: steps)) }
    }

    private let shared: Shared
    private let listener: HTTPListener
    /// `http://127.0.0.1:PORT`.
    let url: String

    /// Listens on a free loopback port; connections beyond the script get `.close`.
    init(_ steps: [Step]) throws {
        let shared = Shared(steps)
        self.shared = shared
        listener = try HTTPListener(address: "127.0.0.1:0", threadName: "ll-scripted-http") { client in
            let request = try? HTTPRequest.read(from: client, timeoutSeconds: 5)
            let step = shared.state.withLock { state -> Step in
                if let request { state.requests.append(request) }
                return state.steps.isEmpty ? .close : state.steps.removeFirst()
            }
            switch step {
            case .answer(let bytes):
                _ = HTTPResponse.write(bytes, to: client)
                Glibc.close(client)
            case .answerInTwoParts(let first, let second):
                _ = HTTPResponse.write(first, to: client)
                usleep(50_000)
                _ = HTTPResponse.write(second, to: client)
                Glibc.close(client)
            case .answerKeepingOpen(let bytes):
                _ = HTTPResponse.write(bytes, to: client)
                shared.state.withLock { $0.held.append(client) }
            case .silence: shared.state.withLock { $0.held.append(client) }
            case .close: Glibc.close(client)
            }
        }
        url = "http://127.0.0.1:\(listener.port)"
    }

    /// The requests read so far.
    var requests: [HTTPRequest] { shared.state.withLock { $0.requests } }

    /// Stops listening and closes the connections it held open.
    func stop() {
        listener.stop()
        for client in shared.state.withLock({ $0.held }) { Glibc.close(client) }
    }

    /// An answer with `Content-Length`.
    static func answer(_ status: Int, _ body: String, reason: String = "OK") -> [UInt8] {
        Array(
            "HTTP/1.1 \(status) \(reason)\r\nContent-Type: application/json\r\nContent-Length: \(body.utf8.count)\r\n\r\n\(body)"
                .utf8)
    }

    /// An answer with a chunked body of `chunks`.
    static func chunked(_ status: Int, _ chunks: [String]) -> [UInt8] {
        var text = "HTTP/1.1 \(status) OK\r\nTransfer-Encoding: chunked\r\n\r\n"
        for chunk in chunks { text += String(chunk.utf8.count, radix: 16) + ";ext=1\r\n" + chunk + "\r\n" }
        return Array((text + "0\r\n\r\n").utf8)
    }
}
