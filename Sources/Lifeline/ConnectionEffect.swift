import LifelineProtocol

/// What a ``BrokerConnection`` asks its socket thread (or a test) to do.
enum ConnectionEffect: Sendable, Equatable {
    /// Replace the control socket with a fresh DEALER connected to the broker.
    case openControl
    /// Send `frames` on the control socket.
    case sendControl([[UInt8]])
    /// Replace the bus socket with a SUB connected to `endpoint`, subscribed to `subscriptions` in order.
    case openBus(endpoint: String, subscriptions: [[UInt8]])
    /// A bus event for the application; `replayed` when it came from the broker's journal.
    case deliverEvent(BusMessage, replayed: Bool)
    /// A request from the broker (a CALL) for the application to answer.
    case deliverRequest(ControlRequest)
    /// One step of a dispatch, to be handled in order with the events.
    case deliverOffer(ControlRequest)
    /// Events were lost and cannot be replayed.
    case gap(GapNotice)
    /// The answer to the application's request `ticket`.
    case complete(ticket: UInt64, Result<ControlReply, LifelineError>)
    /// Registered (or attached) with the broker whose epoch is given; `first` for the first time. The
    /// snapshot: the sequence the session starts after and the application's lifecycle state.
    case joined(epoch: UInt64, first: Bool, sequence: UInt64, lifecycle: String)
    /// The broker refused the service for good (its name is taken): stop.
    case refused(LifelineError)
    /// Shutdown finished: close everything.
    case finished
    /// One line for the log.
    case log(String)
}
