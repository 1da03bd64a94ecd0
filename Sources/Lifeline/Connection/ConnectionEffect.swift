import LifelineProtocol

/// What a ``BrokerConnection`` asks its socket thread (or a test) to do.
enum ConnectionEffect: Sendable, Equatable {
    /// Replace the control socket with a fresh DEALER connected to the broker.
    case openControl
    /// Like ``openControl``, but what the old socket still queues is dropped, not sent later.
    case reopenControlDiscardingQueue
    /// Close the control socket, dropping what it queued (a plain client waiting to move).
    case closeControl
    /// Send `frames` on the control socket.
    case sendControl([[UInt8]])
    /// Replace the bus socket with a SUB connected to `endpoint`, subscribed to `subscriptions` in order.
    case openBus(endpoint: String, subscriptions: [[UInt8]])
    /// Hand `event` to the application.
    case deliver(ConnectionEvent)
    /// Hand the application live events of one bus message (one name, each the next of its name,
    /// in bus order), received at `receivedAt`: a run the application may take whole
    /// (``ConnectionConfiguration/deliverInline``), else each one as ``ConnectionEvent/event(_:receivedAt:replayed:)``.
    case deliverRun(ArraySlice<BusMessage>, receivedAt: UInt64)
}
