import Foundation
import LifelineSupport
import Synchronization
import ZeroMQ

/// The ZAP handler (ZeroMQ RFC 27) of one ZeroMQ context, on its own thread: at every CURVE
/// handshake on the context's sockets libzmq asks it whether the client's public key may connect.
/// Each socket names its ZAP domain, and each domain has its own allow-list: ``brokerDomain`` for
/// the control and bus sockets (the policy's keys), ``groupDomain`` for a group member's group
/// socket (the members' keys). A key on its domain's allow-list is let in with its public key (Z85)
/// as the connection's `User-Id`, which every message then carries: grants, name ownership and
/// revocation all follow the key itself, never the name an entry of the policy gives it. Any other
/// key — and any key on a domain the handler does not know — is refused, so none of its messages
/// reaches the broker. A domain given no allow-list (`Admission.anyKey`) lets every key in.
final class ZAPHandler: Sendable {
    static let endpoint = "inproc://zeromq.zap.01"
    /// The broker's control and bus sockets, and a standby's stand-ins for them.
    static let brokerDomain = "lifeline"
    /// A group member's group socket.
    static let groupDomain = "lifeline-group"

    /// Who may connect on one domain.
    enum Admission: Sendable {
        /// Every key (CURVE without a policy).
        case anyKey
        /// The keys of an allow-list: public key → key name (only the keys matter here).
        case keys([String: String])

        /// The policy's keys, or any key without a policy.
        init(_ allowList: [String: String]?) { self = allowList.map(Admission.keys) ?? .anyKey }

        /// Whether `key` (Z85) may complete a handshake.
        func admits(_ key: String) -> Bool {
            switch self {
            case .anyKey: true
            case .keys(let list): list[key] != nil
            }
        }
    }

    private let admissions: Mutex<[String: Admission]>
    private let stopMailbox = Mailbox<Bool>()
    private let refusals = Mutex<[String: Int]>([:])

    /// Binds the handler in `context` (before any socket of the context binds) and starts its thread.
    init(context: ZMQContext, admissions: [String: Admission], log: @escaping @Sendable (String) -> Void)
        throws
    {
        self.admissions = Mutex(admissions)
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

    /// Replaces who may connect on `domain`; takes effect at the next handshake.
    func update(_ admission: Admission, domain: String) {
        admissions.withLock { $0[domain] = admission }
    }

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
        let domain = String(decoding: request[2], as: UTF8.self)
        let allowed = admissions.withLock { $0[domain]?.admits(key) ?? false }
        guard allowed else {
            let count = refusals.withLock { counts -> Int in
                counts[domain + " " + key, default: 0] += 1
                return counts[domain + " " + key] ?? 0
            }
            // Once, then at every power of ten: a client that keeps reconnecting does not flood the log.
            let digits = String(count)
            if digits.first == "1" && digits.dropFirst().allSatisfy({ $0 == "0" }) {
                log(
                    "refused a CURVE handshake from \(address.escapedForLog): key \(key.escapedForLog) is not on the allow-list (\(domain == Self.groupDomain ? "the group socket" : "the control and bus sockets"), \(count) time(s))"
                )
            }
            return refuse("400", "key not allowed")
        }
        return [Array("1.0".utf8), id, Array("200".utf8), Array("OK".utf8), Array(key.utf8), []]
    }
}
