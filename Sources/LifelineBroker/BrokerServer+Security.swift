import LifelineProtocol
import LifelineSupport
import ZeroMQ

/// The server's part of access control with CURVE: reading the policy again (SIGHUP) and cutting
/// off the connections of the keys it revokes (`KeyConnections`).
extension BrokerServer {
    /// Reads the policy file again: the ZAP handler takes the new keys, the core drops what they no
    /// longer allow, and the connections of revoked keys are closed (the bus at once, the control
    /// connection once its DISCONNECT has left).
    func reload() {
        guard let path = policyPath, let zap else {
            log("nothing to reload: the broker runs without --policy")
            return
        }
        let policy: AccessPolicy
        do {
            policy = try AccessPolicy(path: path)
        } catch {
            log("refused the new policy, kept the old one: \(error.message)")
            return
        }
        zap.update(.keys(policy.names), domain: ZAPHandler.brokerDomain)
        var change = core.apply(policy, now: SystemClock.now, into: &output)
        // A key that spoke on the bus only (a subscriber that never sent a request) is revoked too.
        for key in connections.keys where policy.names[key] == nil && change.revoked[key] == nil {
            change.revoked[key] = key
        }
        var revoked = 0
        // The bus at once, before anything more is sent on it; the control connection once its
        // DISCONNECT has left.
        for key in change.revoked.keys {
            revoked += KeyConnections.close(connections.take(key, on: [.bus]))
        }
        flush()
        for key in change.revoked.keys {
            let handles = connections.take(key, on: [.control])
            revoked += handles.count
            connections.close(handles, at: SystemClock.monotonicNanoseconds() + Self.revocationGrace)
        }
        var resubscribing = 0
        for key in change.subscribeChanged {
            resubscribing += KeyConnections.close(connections.take(key, on: [.bus]))
        }
        let removed = Set(change.revoked.values).sorted()
        log(
            "reloaded \(path): \(policy.grants.count) key(s) allowed\(removed.isEmpty ? "" : "; removed \(removed.joined(separator: ", ")), \(revoked) connection(s) closing")\(resubscribing == 0 ? "" : "; \(resubscribing) bus connection(s) closed to subscribe again under a changed 'subscribe' rule")"
        )
    }

    /// A message from a key the policy no longer lists, on a connection the reload did not know of
    /// (it had not spoken since the broker started, or its handshake was approved just before):
    /// DISCONNECT, and the connection closed once that has left.
    func cutOff(_ key: String, peer: [UInt8], descriptor: Int32) {
        guard !connections.isClosing(descriptor) else { return }
        core.disconnect(
            [peer], reason: "revoked: your key is no longer in the broker's policy", into: &output)
        flush()
        let handles = connections.take(key, on: [.control, .bus])
        connections.close(handles, at: SystemClock.monotonicNanoseconds() + Self.revocationGrace)
        log("closing \(handles.count) connection(s) of key \(key): it is no longer in the policy")
    }

    /// Remembers which connection the last message's key spoke on.
    func note(_ sender: ZMQSocket.Sender, _ socket: KeyConnections.Socket) {
        guard let key = sender.userID else { return }
        connections.note(sender.fileDescriptor, key: key, socket: socket)
    }
}
