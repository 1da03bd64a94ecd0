import LifelineProtocol

/// What a connection hands to the application: the one typed delivery from the socket thread (or
/// an in-memory connection) to a client or a service host.
package enum ConnectionEvent: Sendable, Equatable {
    /// A bus event, when the socket thread received it (CLOCK_MONOTONIC nanoseconds), and whether it
    /// was replayed from the journal.
    case event(BusMessage, receivedAt: UInt64, replayed: Bool)
    /// A request from the broker to answer (CALL, OFFER, APP, INTERCEPT, START, BOOT), with its id.
    case request(BrokerRequest, id: [UInt8])
    /// Events were lost and cannot be replayed.
    case gap(GapNotice)
    /// The outcome of the application's request `ticket`: the broker's reply, whatever its status,
    /// or why none came.
    case completion(ticket: UInt64, Result<ControlReply, LifelineError>)
    /// Registered (or attached) with the broker whose epoch is given; `first` for the first time. The
    /// snapshot: the sequence the connection starts after and the application's lifecycle state.
    case joined(epoch: UInt64, first: Bool, sequence: UInt64, lifecycle: String)
    /// The broker refused the service for good (its name is taken): stop.
    case refused(LifelineError)
    /// One line for the log.
    case log(String)
    /// Shutdown finished: everything is closed.
    case finished

    /// True for the deliveries a service handles in bus order, one at a time.
    var isOrdered: Bool {
        switch self {
        case .event, .gap: true
        case .request(let request, _):
            if case .offer = request { true } else { false }
        default: false
        }
    }
}
