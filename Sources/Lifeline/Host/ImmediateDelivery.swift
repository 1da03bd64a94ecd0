import LifelineProtocol
import Synchronization

/// Runs inline handlers (``Service/onInline(_:priority:deadline:perform:)``,
/// ``Service/methodInline(_:_:)``) on the socket thread the moment their delivery is received:
/// a bus event's, when nothing delivered before it is still waiting or being handled (the handlers'
/// queue is empty, its consumer is parked, no drop is untold), so that bus order holds; and a call's
/// method, whose answer is then sent in the same turn of the socket loop. Such a delivery skips the
/// queue (or the task a request runs in), a task resumption and a suspension; any other goes the
/// usual way.
///
/// Deliveries must reach it one at a time from one thread (the socket thread): between the check that
/// the consumer is parked and the end of the handler, nothing else may push to its queue.
final class ImmediateDelivery: Sendable {
    private struct Entry: Sendable {
        let handler: Service.InlineEventHandler
        let counter: HandlerCounts.Counter?
    }

    /// The responder, with what every event needs of it at hand (one reference to take per delivery,
    /// not a copy of the responder).
    private final class Target: Sendable {
        let responder: ServiceResponder
        let context: ServiceContext
        let client: LifelineClient

        init(_ responder: ServiceResponder) {
            self.responder = responder
            context = responder.context
            client = responder.client
        }
    }

    private let entries: [EventName: Entry]
    /// The same entries when there are only a few, compared byte for byte before the table is asked:
    /// comparing a name with a handful costs less than hashing it.
    private let few: [(name: EventName, entry: Entry)]
    private let drops: DropCounter
    private let inbound: InboundQueue<ConnectionEvent>
    /// Which inline handler runs now (the runner reports one that holds up the heartbeats).
    let watch = InlineWatch()
    /// The requests answered in tasks of their own (calls on the socket thread; start hooks, boot
    /// tasks and app callbacks from the runner), not yet answered.
    let requests = RequestsInFlight()
    /// How long the sender of a request is taken to wait when it says nothing (`timeoutMs`): the
    /// broker's default call time-out; a broker of this version always says.
    static let defaultRequestTimeout = 5000
    /// Set once the service's responder exists; until then every delivery goes the usual way.
    private let target = Mutex<Target?>(nil)
    /// Counts a payload that did not decode, as the handlers' loop does.
    private let handled: HandlerCounts

    init(service: Service, handled: HandlerCounts, drops: DropCounter, inbound: InboundQueue<ConnectionEvent>)
    {
        var entries: [EventName: Entry] = [:]
        for (name, handler) in service.eventHandlers {
            if let immediate = handler.immediate {
                entries[name] = Entry(handler: immediate, counter: handled.counter(for: name))
            }
        }
        self.entries = entries
        few = entries.count <= 4 ? entries.map { ($0.key, $0.value) } : []
        self.drops = drops
        self.inbound = inbound
        self.handled = handled
    }

    /// True when the service has inline event handlers.
    var handlesEvents: Bool { !entries.isEmpty }

    /// Lets deliveries be handled here from now on (once the service's didCreate has returned).
    func attach(_ responder: ServiceResponder) {
        let attached = Target(responder)
        target.withLock { $0 = attached }
    }

    /// Takes `request` on the socket thread and returns true when it is a call: answered now when
    /// its method is inline (``ServiceResponder/answerNow(_:id:watch:)``), else in a task that
    /// prefers the socket thread (``SocketExecutor``), so that it runs right after this turn of the
    /// loop and its answer leaves without a thread hand-off. False for anything else, and for calls
    /// over a connection without such an executor: they go to the runner.
    func answer(_ request: BrokerRequest, id: [UInt8]) -> Bool {
        guard case .call(let call) = request, let target = target.withLock({ $0 }) else { return false }
        let pending: ServiceResponder.PendingCall
        switch target.responder.answerNow(call, id: id, watch: watch) {
        case .now(let reply):
            target.client.answer(reply)
            return true
        case .later(let found): pending = found
        }
        guard let executor = target.client.executor else { return false }
        let responder = target.responder
        requests.track(
            timeoutMilliseconds: call.timeoutMilliseconds ?? Self.defaultRequestTimeout, executor: executor
        ) { await responder.respond(to: pending, id: id) }
        return true
    }

    /// Runs the handler of `message` now and returns true, or returns false when it must be queued.
    func deliver(_ message: BusMessage, receivedAt: UInt64, replayed: Bool) -> Bool {
        guard let (entry, target) = admit(message.name) else { return false }
        watch.run(.event(message.name), log: target.context.log) {
            handle(message, entry, target, receivedAt: receivedAt, replayed: replayed)
        }
        return true
    }

    /// Runs the handler of each event of `run` (live events of one name, in bus order) now, one
    /// after the other, and returns how many: all of them, or none when they must be queued. What
    /// lets the first run inline holds for the rest: only this thread pushes to the queue.
    func deliver(run: ArraySlice<BusMessage>, receivedAt: UInt64) -> Int {
        guard let first = run.first, let (entry, target) = admit(first.name) else { return 0 }
        let what: InlineWatch.Handler =
            run.count == 1 ? .event(first.name) : .events(first.name, count: run.count)
        watch.run(what, log: target.context.log) {
            for message in run { handle(message, entry, target, receivedAt: receivedAt, replayed: false) }
        }
        return run.count
    }

    /// The handler of `name` and where it runs, when an event of that name may run now: it has an
    /// inline handler, no drop is waiting to be told, and the consumer waits (nothing is queued).
    private func admit(_ name: EventName) -> (Entry, Target)? {
        guard let entry = entry(for: name), !drops.hasUntold, inbound.consumerIsWaiting,
            let target = target.withLock({ $0 })
        else { return nil }
        return (entry, target)
    }

    /// Runs `entry`'s handler for `message` and settles it (counts it, acknowledges it when asked).
    private func handle(
        _ message: BusMessage, _ entry: Entry, _ target: Target, receivedAt: UInt64, replayed: Bool
    ) {
        var failure: (any Error)?
        do {
            try entry.handler(
                Event(message, receivedAt: receivedAt, context: target.context, replayed: replayed))
        } catch {
            failure = error
        }
        ServiceResponder.settle(
            message, failure: failure, counter: entry.counter, handled: handled, context: target.context,
            client: target.client)
    }

    private func entry(for name: EventName) -> Entry? {
        for candidate in few where candidate.name.isIdentical(to: name) { return candidate.entry }
        return entries[name]
    }
}
