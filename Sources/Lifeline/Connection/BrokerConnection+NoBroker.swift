import LifelineProtocol

/// A client with no broker to talk to: when the broker's address refuses the connection and never
/// accepted it, the client's requests fail at once with a sentence instead of waiting out their
/// time-outs. It is a plain client's rule (one that does not register or subscribe, with one
/// endpoint): a service waits for its broker, and a group's client tries the next member. A broker
/// that was reached once and is gone now is waited for (a restart), as before.
extension BrokerConnection {
    /// How long after the start a refused connection counts as no broker.
    static let noBrokerNanoseconds: UInt64 = 800_000_000

    /// libzmq's monitor said the control socket connected (`connected`) or a connect was refused.
    mutating func controlLink(connected: Bool, now: UInt64) {
        if connected {
            linkConnected = true
            linkRefusedAt = nil
        } else if !linkConnected && linkRefusedAt == nil {
            linkRefusedAt = now
        }
    }

    /// From when requests fail for want of a broker; nil while one may still answer.
    var noBrokerAt: UInt64? {
        guard !configuration.joins, configuration.brokerEndpoints.count == 1, !linkConnected,
            let refused = linkRefusedAt
        else { return nil }
        return max(refused, startedAt &+ Self.noBrokerNanoseconds)
    }

    var noBrokerError: LifelineError {
        .noBroker(at: currentEndpoint, "the connection is refused")
    }

    /// Fails every waiting request once there is no broker, and opens the control socket afresh:
    /// what the old one queued must not reach a broker that starts later, after its sender was
    /// told it failed.
    mutating func failForNoBroker(now: UInt64, into effects: inout [ConnectionEffect]) {
        guard !outstanding.isEmpty, let absent = noBrokerAt, now >= absent else { return }
        for request in outstanding.values {
            effects.append(.deliver(.completion(ticket: request.ticket, .failure(noBrokerError))))
        }
        outstanding.removeAll()
        effects.append(.reopenControlDiscardingQueue)
    }
}
