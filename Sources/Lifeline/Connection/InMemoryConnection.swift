import LifelineProtocol
import Synchronization

/// A connection with no sockets, for tests that play the broker (as swift-nio's embedded channel
/// lets handlers run without a network): what the client posts is recorded and can be awaited in
/// order; what the broker would send is injected with ``deliver(_:)``.
package final class InMemoryConnection: Connection {
    private struct State {
        var pending: PendingReplies?
        var sink: (@Sendable (ConnectionEvent) -> Void)?
        var posted: [ConnectionCommand] = []
        var waiter: CheckedContinuation<ConnectionCommand, Never>?
        var closed = false
        var closeWaiters: [CheckedContinuation<Void, Never>] = []
        var attachWaiters: [CheckedContinuation<Void, Never>] = []
    }

    private let state = Mutex(State())

    package init() {}

    /// Where completions and deliveries go: set by the client that owns this connection.
    func attach(_ pending: PendingReplies, _ sink: @escaping @Sendable (ConnectionEvent) -> Void) {
        let waiters = state.withLock { state in
            state.pending = pending
            state.sink = sink
            defer { state.attachWaiters.removeAll() }
            return state.attachWaiters
        }
        for waiter in waiters { waiter.resume() }
    }

    /// Waits until a client has attached, so that deliveries reach it.
    package func attached() async {
        await withCheckedContinuation { continuation in
            let ready = state.withLock { state in
                if state.sink == nil { state.attachWaiters.append(continuation) }
                return state.sink != nil
            }
            if ready { continuation.resume() }
        }
    }

    /// Hands `event` to the client, as the socket thread would: a completion resumes its waiter.
    package func deliver(_ event: ConnectionEvent) {
        let (pending, sink) = state.withLock { ($0.pending, $0.sink) }
        if case .completion(let ticket, let result) = event {
            pending?.resume(ticket, with: result)
        } else {
            sink?(event)
        }
    }

    /// Records `command`; a shutdown closes the connection at once, as if the broker had answered
    /// UNREGISTER.
    package func post(_ command: ConnectionCommand) {
        defer { if case .shutdown = command { close() } }
        let waiter = state.withLock { state -> CheckedContinuation<ConnectionCommand, Never>? in
            if let waiter = state.waiter {
                state.waiter = nil
                return waiter
            }
            state.posted.append(command)
            return nil
        }
        waiter?.resume(returning: command)
    }

    /// The next command the client posted, waiting for it if needed.
    package func nextCommand() async -> ConnectionCommand {
        await withCheckedContinuation { continuation in
            let ready = state.withLock { state -> ConnectionCommand? in
                if !state.posted.isEmpty { return state.posted.removeFirst() }
                state.waiter = continuation
                return nil
            }
            if let ready { continuation.resume(returning: ready) }
        }
    }

    /// The next answer the client sent to a broker request, skipping other commands.
    package func nextAnswer() async -> ControlReply {
        while true {
            if case .answer(let reply) = await nextCommand() { return reply }
        }
    }

    /// Ends the connection: the client hears `finished`, and waiters of ``finished()`` resume.
    package func close() {
        let (pending, sink, waiters) = state.withLock { state in
            state.closed = true
            defer { state.closeWaiters.removeAll() }
            return (state.pending, state.sink, state.closeWaiters)
        }
        pending?.failAll(LifelineError(.unavailable, "the connection was closed"))
        sink?(.finished)
        for waiter in waiters { waiter.resume() }
    }

    package func finished() async {
        await withCheckedContinuation { continuation in
            let closed = state.withLock { state in
                if !state.closed { state.closeWaiters.append(continuation) }
                return state.closed
            }
            if closed { continuation.resume() }
        }
    }

}
