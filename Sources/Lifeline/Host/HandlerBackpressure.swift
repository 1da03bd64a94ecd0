import LifelineProtocol
import Synchronization

/// The handler queue of a service that resumes from a cursor (`.resume`): it never drops an event.
/// When the queue is full, the event that finds no room and every later one are refused, and the
/// connection is told (``ConnectionCommand/handlersFull(_:sequence:topicSequence:)``, once per name):
/// it takes its position back to just before them and delivers nothing more. Once the handlers have
/// worked the queue down to half, the connection is told they have room
/// (``ConnectionCommand/handlersHaveRoom(resume:)``); the pause ends on the socket thread, when the
/// connection takes that command (``resume()``), right before it asks the broker's journal for what
/// was refused — so no event gets into the queue ahead of the ones asked for again.
///
/// The socket thread offers; the handler task takes. The commands are posted under one lock, so the
/// connection sees each pause's refusals before the room that ends it.
final class HandlerBackpressure: Sendable {
    private struct State {
        var refusing = false
        /// Room was posted and the connection has not taken it yet.
        var roomPosted = false
        /// Names whose first refusal of this pause the connection was told.
        var told: Set<EventName> = []
        var tell: (@Sendable (ConnectionCommand) -> Void)?
    }

    private let state = Mutex(State())
    /// `state.refusing`, readable without the lock.
    private let refusing = Atomic<Bool>(false)

    /// Sets how the connection is told (once the client exists, before it connects).
    func attach(_ tell: @escaping @Sendable (ConnectionCommand) -> Void) {
        state.withLock { $0.tell = tell }
    }

    /// Queues `delivery` (of `message`) in `queue` unless it is full or a pause goes on; returns
    /// false when it was refused (the connection will deliver it again from the journal).
    func offer(_ delivery: ConnectionEvent, _ message: BusMessage, to queue: InboundQueue<ConnectionEvent>)
        -> Bool
    {
        if !refusing.load(ordering: .acquiring), queue.pushWithoutDropping(delivery, onlyIfRoom: true) {
            return true
        }
        return state.withLock { state in
            if !state.refusing, queue.pushWithoutDropping(delivery, onlyIfRoom: true) { return true }
            if !state.refusing {
                state.refusing = true
                refusing.store(true, ordering: .releasing)
            }
            if let tell = state.tell, state.told.insert(message.name).inserted {
                tell(
                    .handlersFull(
                        message.name, sequence: message.header.sequence,
                        topicSequence: message.header.topicSequence))
            }
            // The handler task may have emptied the queue before the pause began: it looks no more.
            postRoomIfHalfFree(&state, queue)
            return false
        }
    }

    /// Called by the handler task after it took from `queue`: says the handlers have room once half
    /// of it is free.
    func took(from queue: InboundQueue<ConnectionEvent>) {
        guard refusing.load(ordering: .acquiring) else { return }
        state.withLock { postRoomIfHalfFree(&$0, queue) }
    }

    /// Ends the pause: called on the socket thread as the connection takes the room it was told of.
    func resume() {
        state.withLock { state in
            state.refusing = false
            state.roomPosted = false
            state.told.removeAll()
            refusing.store(false, ordering: .releasing)
        }
    }

    private func postRoomIfHalfFree(_ state: inout State, _ queue: InboundQueue<ConnectionEvent>) {
        guard state.refusing, !state.roomPosted, let tell = state.tell, queue.count <= queue.limit / 2 else {
            return
        }
        state.roomPosted = true
        tell(.handlersHaveRoom(resume: { [self] in resume() }))
    }
}
