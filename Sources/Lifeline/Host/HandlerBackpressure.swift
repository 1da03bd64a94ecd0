import LifelineProtocol
import Synchronization

/// The handler queue of a service that resumes from a cursor (`.resume`): it never drops an event.
/// When the queue is full, the event that finds no room and every later one are refused, and the
/// connection is told (``ConnectionCommand/handlersFull(_:sequence:topicSequence:)``, once per name):
/// it takes its position back to just before them and delivers nothing more. Once the handlers have
/// worked the queue down to half, the connection is told they have room
/// (``ConnectionCommand/handlersHaveRoom``) and asks the broker's journal for what was refused.
///
/// The socket thread pushes; the handler task takes. The commands are posted under one lock, so the
/// connection sees each pause's refusals before the room that ends it.
final class HandlerBackpressure: Sendable {
    private struct State {
        var refusing = false
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

    /// Queues `message` (a delivery of it) in `queue` unless it is full or a pause goes on; returns
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
            if state.told.insert(message.name).inserted {
                state.tell?(
                    .handlersFull(
                        message.name, sequence: message.header.sequence,
                        topicSequence: message.header.topicSequence))
            }
            return false
        }
    }

    /// Called by the handler task after it took from `queue`: ends a pause once half of it is free.
    func took(from queue: InboundQueue<ConnectionEvent>) {
        guard refusing.load(ordering: .acquiring) else { return }
        state.withLock { state in
            guard state.refusing, queue.count <= queue.limit / 2 else { return }
            state.refusing = false
            refusing.store(false, ordering: .releasing)
            state.told.removeAll()
            state.tell?(.handlersHaveRoom)
        }
    }
}
