import Glibc
import LifelineProtocol
import ZeroMQ

/// What a standby binds on the broker's endpoints, so clients that try it learn where the leader is
/// at once: every request is answered 503 with the leader's control endpoints (`leader`), a
/// service's HEARTBEAT with DISCONNECT (`reason`, `leader`). The bus endpoint is bound, idle, so its
/// port stays this broker's. Under `--key` both are CURVE servers with the broker's keys, admitting
/// the policy's keys only, as the leader's sockets are: a stranger learns nothing from a standby.
final class StandIn {
    /// The broker's CURVE keys (nil: plain text) and its limit on one message.
    struct Security {
        let keys: CurveKeyPair?
        let maximumMessageBytes: Int
    }

    let controlEndpoints: [String]
    let busEndpoints: [String]
    private let router: ZMQSocket
    private let bus: ZMQSocket

    /// The sockets to wait on.
    var sockets: [ZMQSocket] { [router, bus] }

    /// Binds `control` and `bus` in `context` (whose ZAP handler admits the keys of domain
    /// `lifeline` when `security` has keys); the bound endpoints are ``controlEndpoints`` and
    /// ``busEndpoints``.
    /// - Throws: `ZeroMQError` when a socket cannot be made or bound.
    init(context: ZMQContext, control: [String], bus busGiven: [String], security: Security) throws {
        router = try ZMQSocket(context, type: .router)
        try router.set(.linger, 0)
        try router.set(.maxMessageSize, security.maximumMessageBytes)
        bus = try ZMQSocket(context, type: .xpub)
        try bus.set(.linger, 0)
        try bus.set(.maxMessageSize, BusSubscriptionRule.maximumMessageBytes)
        if let keys = security.keys {
            try router.secureAsServer(keys, domain: ZAPHandler.brokerDomain)
            try bus.secureAsServer(keys, domain: ZAPHandler.brokerDomain)
        }
        var controls: [String] = []
        for endpoint in control {
            try GroupBinding.bind(router, endpoint)
            controls.append(try router.lastEndpoint())
        }
        var buses: [String] = []
        for endpoint in busGiven {
            try GroupBinding.bind(bus, endpoint)
            buses.append(try bus.lastEndpoint())
        }
        controlEndpoints = controls
        busEndpoints = buses
    }

    deinit {
        for endpoint in controlEndpoints { try? router.unbind(endpoint) }
        for endpoint in busEndpoints { try? bus.unbind(endpoint) }
        router.close()
        bus.close()
    }

    /// Answers what clients sent.
    func answer(leader: MemberRecord?, member: String, group: String, log: (String) -> Void) {
        // Subscriptions are read and dropped: nothing is published here.
        while (try? bus.receiveFrames(dontWait: true)) != nil {}
        while let frames = try? router.receiveFrames(dontWait: true) {
            guard frames.count >= 2 else { continue }
            if frames[1] != Array("LLC01".utf8) {
                // Not this protocol's version: the error the leader would answer (400, or 505 for
                // another version), so that a client learns it from any member.
                do {
                    _ = try ControlMessage.decode(frames[1...])
                } catch {
                    log("refused a message from a client: \(error.message)")
                    let reply = ControlReply.error(error.status, error.message, requestID: error.requestID)
                    _ = try? router.send(frames: [frames[0]] + reply.frames(), dontWait: true)
                }
                continue
            }
            guard frames.count >= 4 else { continue }
            let command = String(decoding: frames[2], as: UTF8.self)
            let id = frames[3]
            let (sentence, hint) = Self.sentence(leader: leader, member: member, group: group)
            switch command {
            case "REPLY", "ACK", "EVENT": continue
            case "HEARTBEAT":
                var header: JSONValue = ["reason": .string(sentence)]
                if let hint { header = ["reason": .string(sentence), "leader": hint] }
                let request = ControlRequest(.disconnect, requestID: [], header: header)
                _ = try? router.send(frames: [frames[0]] + request.frames(), dontWait: true)
            default:
                let leader = hint?.arrayValue?.compactMap(\.stringValue)
                let reply = ControlReply(
                    requestID: id, status: .unavailable,
                    body: ErrorReply(sentence, leader: leader, standby: true).bytes)
                _ = try? router.send(frames: [frames[0]] + reply.frames(), dontWait: true)
            }
        }
    }

    private static func sentence(leader: MemberRecord?, member: String, group: String) -> (String, JSONValue?)
    {
        guard let leader else {
            return (
                "broker \(member) is a standby of group \(group), which has no leader at the moment; try again",
                nil
            )
        }
        return (
            "broker \(member) is a standby of group \(group); the leader is \(leader.member) at \(leader.control.joined(separator: ","))",
            .array(leader.control.map(JSONValue.string))
        )
    }
}

/// Binding an endpoint a moment after another socket of this process let it go (libzmq closes a
/// listener on its I/O thread): tried again for up to a second while the address is in use.
enum GroupBinding {
    static func bind(_ socket: ZMQSocket, _ endpoint: String) throws {
        var attempts = 0
        while true {
            do {
                try socket.bind(endpoint)
                return
            } catch let error as ZeroMQError where error.code == EADDRINUSE && attempts < 100 {
                attempts += 1
                usleep(10_000)
            }
        }
    }
}
