import LifelineProtocol
import Synchronization

/// Runs the handler of a bus event on the socket thread the moment the event is received, when the
/// handler does not `await` and nothing delivered before it is still waiting or being handled (the
/// handlers' queue is empty, its consumer is parked, no drop is untold). Such an event skips the
/// queue, a task resumption and a suspension; any other goes through the queue, so bus order holds.
final class ImmediateDelivery: Sendable {
    private struct Entry: Sendable {
        let handler: Service.ImmediateEventHandler
        let counter: HandlerCounts.Counter?
    }

    private struct Target: Sendable {
        let context: ServiceContext
        let client: LifelineClient
    }

    private let entries: [EventName: Entry]
    private let drops: DropCounter
    private let inbound: InboundQueue<ConnectionEvent>
    /// Set once the service's context exists; until then every event is queued.
    private let target = Mutex<Target?>(nil)

    init(service: Service, handled: HandlerCounts, drops: DropCounter, inbound: InboundQueue<ConnectionEvent>)
    {
        var entries: [EventName: Entry] = [:]
        for (name, handler) in service.eventHandlers {
            if let immediate = handler.immediate {
                entries[name] = Entry(handler: immediate, counter: handled.counter(for: name))
            }
        }
        self.entries = entries
        self.drops = drops
        self.inbound = inbound
    }

    /// Lets events be handled here from now on.
    func attach(context: ServiceContext, client: LifelineClient) {
        target.withLock { $0 = Target(context: context, client: client) }
    }

    /// Runs the handler of `message` now and returns true, or returns false when it must be queued.
    func deliver(_ message: BusMessage, receivedAt: UInt64, replayed: Bool) -> Bool {
        guard let entry = entries[message.name], !drops.hasUntold, inbound.consumerIsWaiting,
            let target = target.withLock({ $0 })
        else { return false }
        var failure: (any Error)?
        do {
            try entry.handler(
                Event(message, receivedAt: receivedAt, context: target.context, replayed: replayed))
        } catch {
            failure = error
        }
        ServiceResponder.settle(
            message, failure: failure, counter: entry.counter, context: target.context, client: target.client)
        return true
    }
}
