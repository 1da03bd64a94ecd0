import LifelineProtocol

/// What other threads may ask of a connection.
package enum ConnectionCommand: Sendable {
    /// Send `request` (its frames written from the typed value; the connection gives it a request
    /// id) and complete `ticket` with its answer.
    case request(ClientRequest, ticket: UInt64, timeoutMilliseconds: Int)
    case answer(ControlReply)
    case acknowledge(sequence: UInt64, epoch: UInt64, error: String?)
    /// The request `ticket` was cancelled: it is forgotten (not sent, if it waits to be; its answer
    /// dropped, if one comes).
    case cancel(ticket: UInt64)
    /// The service's handlers had no room for this event of `name` (nor will they take any later
    /// one): its position goes back to just before it, and nothing more is delivered until
    /// ``handlersHaveRoom``.
    case handlersFull(EventName, sequence: UInt64, topicSequence: UInt64)
    /// The handlers have room again: `resume` (run on the socket thread first) lets them take
    /// events again, and what they refused is asked of the broker's journal.
    case handlersHaveRoom(resume: @Sendable () -> Void)
    case shutdown
}

/// A connection to the broker as the client and the service host see it: commands go in, deliveries
/// come out through the sink it was made with. ``ConnectionThread`` is the production one (ZeroMQ
/// sockets on a dedicated thread); ``InMemoryConnection`` lets tests play the broker.
package protocol Connection: Sendable {
    /// Hands `command` to the connection; it is carried out in posting order.
    func post(_ command: ConnectionCommand)
    /// Waits until the connection has closed.
    func finished() async
    /// The thread that reads this connection's replies, as an executor for the tasks that await
    /// them (nil: such tasks run on the Swift pool).
    var executor: (any TaskExecutor)? { get }
}

extension Connection {
    package var executor: (any TaskExecutor)? { nil }
}
