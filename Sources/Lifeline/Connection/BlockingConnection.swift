import LifelineProtocol
import LifelineSupport
import Synchronization

/// A connection to the broker driven by the thread that calls it, one request at a time, with no
/// thread of its own: the SDK's ``BrokerConnection`` in the SDK's ``SocketLoop`` — the same
/// leader-following, re-sending of what a standby refused, no-broker and handshake rules — for
/// short-lived tools and dedicated threads (the CLI, benchmark drivers). Not for the Swift
/// concurrency pool: each request blocks its thread.
package final class BlockingConnection {
    private let loop: SocketLoop
    private let mailbox: Mailbox<ConnectionCommand>
    private let pending = PendingReplies()
    private let outcome = Outcome()

    /// Connects (in the background, as ZeroMQ does) to `broker`: one endpoint, or a group's members
    /// separated by commas; with CURVE when `credentials` are given.
    /// - Throws: ``LifelineError`` (`.badRequest`) when the control socket cannot be made or
    ///   connected (a bad endpoint).
    package init(broker: String, credentials: LifelineClient.Credentials?) throws(LifelineError) {
        var configuration = ConnectionConfiguration(brokerEndpoint: broker, token: Environment.uniqueToken())
        configuration.credentials = credentials
        let mailbox = Mailbox<ConnectionCommand>()
        self.mailbox = mailbox
        let firstLine = Outcome.Line()
        loop = SocketLoop(
            configuration: configuration, mailbox: mailbox,
            executor: SocketExecutor(owner: OwnerThread(), wake: { mailbox.wake() }, log: { _ in }),
            pending: pending, returnsAfterCompletion: true,
            deliver: { event in if case .log(let line) = event { firstLine.keepFirst(line) } })
        loop.start()
        guard loop.control != nil else {
            loop.close()
            throw LifelineError(
                .badRequest,
                "cannot connect to the broker at \(loop.connection.currentEndpoint): \(firstLine.text ?? "no socket")"
            )
        }
    }

    deinit {
        mailbox.postFromOwner(.shutdown)
        while loop.turn() {}
        loop.close()
    }

    /// The control endpoint in use: one of a group's, once the leader is found.
    package var endpoint: String { loop.connection.currentEndpoint }

    /// Sends `request` and waits up to `timeout` for the broker's reply, whatever its status.
    /// - Throws: ``LifelineError`` when no reply came: `.timeout` when none came in time,
    ///   `.unavailable` when no broker answers (or the connection to it was lost before it did),
    ///   `.forbidden` when the broker refused this client's key.
    package func send(_ request: ClientRequest, timeout: Duration) throws(LifelineError) -> ControlReply {
        let outcome = self.outcome
        _ = outcome.take()
        // Between requests nobody reads the monitor: what it said meanwhile (a broker that came,
        // a handshake that succeeded) is read before the request is judged.
        if loop.link != nil { loop.linkMayHaveInput = true }
        let ticket = pending.park(.reply { outcome.keep($0) })
        mailbox.postFromOwner(
            .request(request, ticket: ticket, timeoutMilliseconds: max(1, timeout.wholeMilliseconds)))
        while !outcome.isKept, loop.turn() {}
        guard let result = outcome.take() else {
            pending.discard(ticket)
            mailbox.postFromOwner(.cancel(ticket: ticket))
            throw LifelineError(.unavailable, "the connection was closed")
        }
        return try result.get()
    }
}

/// The outcome of the one request in flight, kept where the socket loop resumed it (on the same
/// thread: the lock is never contended).
private final class Outcome: Sendable {
    private let result = Mutex<Result<ControlReply, LifelineError>?>(nil)

    var isKept: Bool { result.withLock { $0 != nil } }

    func keep(_ outcome: Result<ControlReply, LifelineError>) { result.withLock { $0 = outcome } }

    func take() -> Result<ControlReply, LifelineError>? {
        result.withLock { result in
            defer { result = nil }
            return result
        }
    }

    /// The first line the connection logged.
    final class Line: Sendable {
        private let line = Mutex<String?>(nil)

        var text: String? { line.withLock { $0 } }

        func keepFirst(_ text: String) { line.withLock { $0 = $0 ?? text } }
    }
}
