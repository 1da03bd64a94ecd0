import LifelineProtocol

/// What a plain client (one that neither registers nor subscribes) learns from libzmq's monitor of
/// its control socket, so that it does not wait out a request's time-out for an answer that cannot
/// come:
/// - no broker: when its one broker refuses the connection and never accepted it, requests fail
///   0.8 s after the start, and at once after that; a broker that was reached once and is gone now
///   is waited for (a restart);
/// - a group's member that refuses the connection gives way to the next member at once, with the
///   requests that never left; when every member refuses, a round is tried again after 100 ms, and
///   requests fail as with no broker;
/// - a refused security handshake (a key off the allow-list, a plain client of a CURVE broker, a
///   wrong broker key before any handshake succeeded) fails the requests at once, with what was
///   wrong, and those of the next second; then a request tries a fresh socket. A group's client
///   refused for its key fails so too (the members share the policy); any other handshake a member
///   breaks moves it to the next member, as a refused connection does;
/// - a broker that closes a link carrying requests (killed, restarted, a group's leader stepping
///   down): what it was answering is lost with the link, so those requests fail at once ("lost
///   before it answered"), but for the repeatable ones, sent again once connected; a group's client
///   tries the next member.
extension BrokerConnection {
    /// How long after the start a refused connection counts as no broker.
    static let noBrokerNanoseconds: UInt64 = 800_000_000

    /// Whether the control socket's monitor is read: a plain client's. (A service waits for its
    /// broker, and a group's service tries the next member when HELLO goes unanswered.)
    var watchesLink: Bool { !configuration.joins }

    /// libzmq's monitor said `event` of the control socket.
    mutating func controlLink(_ event: LinkEvent, now: UInt64, into effects: inout [ConnectionEffect]) {
        guard watchesLink else { return }
        switch event {
        case .connected:
            linkConnected = true
            linkRefusedAt = nil
        case .refused where members.isGroup:
            // Only the socket in use counts (a move replaced it), and only a member that did not
            // complete a handshake on it.
            guard case .ready = phase, !linkUp else { return }
            memberRefused(now: now, into: &effects)
        case .refused:
            if !linkConnected && linkRefusedAt == nil { linkRefusedAt = now }
        case .handshakeSucceeded:
            linkUp = true
            handshakeSucceeded = true
            handshakeRefusal = nil
            refusedMembers.removeAll()
        case .handshakeFailed(false, _) where members.isGroup:
            // A member that breaks the handshake (one restarting, say): the next may serve.
            guard case .ready = phase, !linkUp else { return }
            memberRefused(now: now, into: &effects)
        case .disconnected:
            let wasUp = linkUp
            linkUp = false
            guard case .ready = phase, wasUp, outstanding.values.contains(where: { !$0.notTaken }) else {
                return
            }
            // What the old socket still queues must not reach a broker after its sender was told.
            effects.append(.closeControl)
            let again = linkClosedAt.map { now &- $0 < 100_000_000 } ?? false
            linkClosedAt = now
            lose(
                "the broker at \(currentEndpoint) closed the connection",
                retryAt: again ? now &+ 100_000_000 : now, now: now, into: &effects)
        case .handshakeFailed(let auth, let detailed):
            // A connection dropped in a handshake after one succeeded is a broker going away.
            guard detailed || !handshakeSucceeded else { return }
            let refusal = handshakeError(auth: auth)
            if handshakeRefusal == nil { effects.append(.deliver(.log(refusal.message))) }
            handshakeRefusal = (refusal, now)
            failAll(with: refusal, into: &effects)
        }
    }

    /// The group's member in use refuses the connection: the next one, with the requests that never
    /// left this socket (none did when it never connected).
    private mutating func memberRefused(now: UInt64, into effects: inout [ConnectionEffect]) {
        for id in outstanding.keys { outstanding[id]?.notTaken = true }
        refusedMembers.insert(currentEndpoint)
        let everyMember = members.endpoints.allSatisfy(refusedMembers.contains)
        if everyMember {
            refusedMembers.removeAll()
            if !linkConnected && linkRefusedAt == nil { linkRefusedAt = now }
        }
        lose(
            "the broker at \(currentEndpoint) refuses the connection",
            retryAt: everyMember ? now &+ 100_000_000 : now, now: now, into: &effects)
    }

    /// From when requests fail for want of a broker; nil while one may still answer.
    var noBrokerAt: UInt64? {
        guard watchesLink, !linkConnected, let refused = linkRefusedAt else { return nil }
        return max(refused, startedAt &+ Self.noBrokerNanoseconds)
    }

    var noBrokerError: LifelineError {
        members.isGroup
            ? .noBroker(
                at: members.endpoints.joined(separator: ","), "every member refuses the connection")
            : .noBroker(at: currentEndpoint, "the connection is refused")
    }

    /// How long after a refused handshake requests fail without trying.
    static let handshakeRefusalNanoseconds: UInt64 = 1_000_000_000

    /// Why a request fails before it is sent: no broker, or a handshake refused within the last
    /// second. Nil when it may go — after a refusal's second, on a fresh socket (libzmq may not
    /// try a refused handshake again by itself), so that a key allowed since is heard.
    mutating func refusalBeforeSending(now: UInt64, into effects: inout [ConnectionEffect]) -> LifelineError?
    {
        if let problem = configuration.addressProblem {
            var error = LifelineError(.badRequest, "the broker's address: \(problem)")
            error.isFinal = true
            return error
        }
        if let refusal = handshakeRefusal {
            if now < refusal.at &+ Self.handshakeRefusalNanoseconds { return refusal.error }
            handshakeRefusal = nil
            linkUp = false
            effects.append(.reopenControlDiscardingQueue)
        }
        if let absent = noBrokerAt, now >= absent { return noBrokerError }
        return nil
    }

    /// Fails every waiting request once there is no broker.
    mutating func failForNoBroker(now: UInt64, into effects: inout [ConnectionEffect]) {
        guard !outstanding.isEmpty, let absent = noBrokerAt, now >= absent else { return }
        failAll(with: noBrokerError, into: &effects)
    }

    /// Fails every waiting request with `error`, and opens the control socket afresh: what the old
    /// one queued must not reach a broker that answers later, after its sender was told it failed.
    mutating func failAll(with error: LifelineError, into effects: inout [ConnectionEffect]) {
        guard !outstanding.isEmpty else { return }
        for request in outstanding.values.sorted(by: { $0.order < $1.order }) {
            effects.append(.deliver(.completion(ticket: request.ticket, .failure(error))))
        }
        outstanding.removeAll()
        unsent.removeAll()
        effects.append(.reopenControlDiscardingQueue)
        linkUp = false
    }

    private func handshakeError(auth: Bool) -> LifelineError {
        let endpoint = currentEndpoint
        if auth {
            return LifelineError(
                .forbidden,
                "the broker at \(endpoint) refused this client's key: it is not on the broker's allow-list")
        }
        let advice =
            configuration.credentials == nil
            ? "the broker may want a CURVE key (LIFELINE_KEY and LIFELINE_BROKER_KEY; the CLI's --key and --broker-key)"
            : "is LIFELINE_BROKER_KEY (the CLI's --broker-key) the broker's public key, and does the broker use CURVE?"
        var error = LifelineError(
            .unavailable, "the security handshake with the broker at \(endpoint) failed: \(advice)")
        // Never through a handshake: a publish sent again would meet the same keys.
        error.isFinal = !handshakeSucceeded
        return error
    }
}

/// What libzmq's monitor says of a control socket's link to its broker.
enum LinkEvent: Equatable, Sendable {
    /// A connect reached its peer.
    case connected
    /// A connect was refused (nothing listens there) and will be tried again.
    case refused
    /// The security handshake finished: the link carries messages.
    case handshakeSucceeded
    /// The security handshake failed: the broker refused this client's key (`auth`), or the two
    /// sides do not speak the same security; `detailed` unless libzmq gave no reason (a connection
    /// dropped in the handshake: a wrong broker key, or a broker going away).
    case handshakeFailed(auth: Bool, detailed: Bool)
    /// A link that was up closed (the broker went away, or closed it).
    case disconnected
}
