import LifelineProtocol

/// What a ``ServiceSession`` asks its socket thread (or a test) to do.
public enum SessionEffect: Sendable, Equatable {
    /// Replace the control socket with a fresh DEALER connected to the broker.
    case openControl
    /// Send `frames` on the control socket.
    case sendControl([[UInt8]])
    /// Replace the bus socket with a SUB connected to `endpoint`, subscribed to `subscriptions` in order.
    case openBus(endpoint: String, subscriptions: [[UInt8]])
    /// A bus event for the application.
    case deliverEvent(BusMessage)
    /// A request from the broker (a CALL) for the application to answer.
    case deliverRequest(ControlRequest)
    /// The answer to the application's request `ticket`.
    case complete(ticket: UInt64, Result<ControlReply, LifelineError>)
    /// Registered (or attached) with the broker whose epoch is given; `first` for the first time.
    case joined(epoch: UInt64, first: Bool)
    /// The broker refused the service for good (its name is taken): stop.
    case refused(LifelineError)
    /// Shutdown finished: close everything.
    case finished
    /// One line for the log.
    case log(String)
}
