import Foundation
import LifelineSupport
import Synchronization
import ZeroMQ

/// The broker's ZAP handler (ZeroMQ RFC 27) on its own thread: at every CURVE handshake on the
/// broker's sockets libzmq asks it whether the client's public key may connect. A key on the
/// allow-list is let in with its public key (Z85) as the connection's `User-Id`, which every message
/// then carries: grants, name ownership and revocation all follow the key itself, never the name an
/// entry of the policy gives it. Any other key is refused, so none of its messages reaches the
/// broker. Without an allow-list every key is let in.
final class ZAPHandler: Sendable {
    static let endpoint = "inproc://zeromq.zap.01"

    /// Public key → key name (only the keys matter here).
    private let allowList: Mutex<[String: String]?>
    private let stopMailbox = Mailbox<Bool>()
    private let refusals = Mutex<[String: Int]>([:])

    /// Binds the handler in `context` (before the broker binds its sockets) and starts its thread.
    init(context: ZMQContext, allowList: [String: String]?, log: @escaping @Sendable (String) -> Void) throws
    {
        self.allowList = Mutex(allowList)
        let ready = DispatchSemaphore(value: 0)
        let failure = Mutex<ZeroMQError?>(nil)
        let worker = Thread { [self] in
            ThreadName.set("ll-zap")
            let socket: ZMQSocket
            do {
                socket = try ZMQSocket(context, type: .rep)
                try socket.bind(Self.endpoint)
            } catch {
                failure.withLock {
                    $0 = error as? ZeroMQError ?? ZeroMQError(code: EINVAL, operation: "\(error)")
                }
                ready.signal()
                return
            }
            ready.signal()
            serve(socket, log: log)
            socket.close()
        }
        worker.start()
        ready.wait()
        if let error = failure.withLock({ state -> ZeroMQError? in state.take() }) { throw error }
    }

    /// Replaces the allow-list (public key → key name); takes effect at the next handshake.
    func update(_ allowList: [String: String]?) { self.allowList.withLock { $0 = allowList } }

    /// Handshakes refused so far.
    var refused: Int { refusals.withLock { $0.values.reduce(0, +) } }

    /// Stops the thread and closes its socket (so the context can be terminated).
    func stop() { stopMailbox.post(true) }

    private func serve(_ socket: ZMQSocket, log: @Sendable (String) -> Void) {
        var poller = ZMQPoller()
        let stopIndex = poller.add(fileDescriptor: stopMailbox.fileDescriptor)
        let socketIndex = poller.add(socket)
        while true {
            do { try poller.poll(timeoutMilliseconds: -1) } catch { return }
            if poller.isReadable(stopIndex), !stopMailbox.drain().isEmpty { return }
            guard poller.isReadable(socketIndex) else { continue }
            while let request = try? socket.receiveFrames(dontWait: true) {
                let reply = answer(request, log: log)
                _ = try? socket.send(frames: reply)
            }
        }
    }

    /// The reply to one ZAP request: `[version, request id, domain, address, identity, mechanism,
    /// credentials…]` → `[version, request id, status code, status text, user id, metadata]`.
    private func answer(_ request: [[UInt8]], log: @Sendable (String) -> Void) -> [[UInt8]] {
        guard request.count >= 6, request[0] == Array("1.0".utf8) else {
            return [
                Array("1.0".utf8), request.count > 1 ? request[1] : [], Array("500".utf8),
                Array("malformed ZAP request".utf8), [], [],
            ]
        }
        let id = request[1]
        let address = String(decoding: request[3], as: UTF8.self)
        func refuse(_ code: String, _ text: String) -> [[UInt8]] {
            [Array("1.0".utf8), id, Array(code.utf8), Array(text.utf8), [], []]
        }
        guard request[5] == Array("CURVE".utf8), request.count >= 7,
            let key = CurveKeyPair.encode(request[6])
        else {
            return refuse("400", "only CURVE clients may connect")
        }
        let allowed = allowList.withLock { list -> Bool in list == nil || list?[key] != nil }
        guard allowed else {
            let count = refusals.withLock { counts -> Int in
                counts[key, default: 0] += 1
                return counts[key] ?? 0
            }
            // Once, then at every power of ten: a client that keeps reconnecting does not flood the log.
            let digits = String(count)
            if digits.first == "1" && digits.dropFirst().allSatisfy({ $0 == "0" }) {
                log(
                    "refused a CURVE handshake from \(address.escapedForLog): key \(key.escapedForLog) is not on the allow-list (\(count) time(s))"
                )
            }
            return refuse("400", "key not allowed")
        }
        return [Array("1.0".utf8), id, Array("200".utf8), Array("OK".utf8), Array(key.utf8), []]
    }
}
