import Glibc
import LifelineProtocol
import LifelineSupport
import ZeroMQ

/// The bus's subscription notices, as the XPUB hands them over in manual mode: each applied, refused
/// or the cause of closing its connection (``BusSubscriptionLedger``), and the control peers' names.
extension BrokerServer {
    /// Applies (or refuses) each subscription notice as it arrives: in manual mode a subscription
    /// is set on the XPUB right after its notice is read, for the subscriber that sent it.
    /// Returns true when it received anything.
    @discardableResult
    func drainBus() -> Bool {
        var received = false
        defer { flush() }
        // A closed connection wakes the loop through the XPUB's descriptor (libzmq ends its pipe).
        busConnections.update()
        forgetClosedBusConnections()
        while let notice = next(on: bus, "bus", mayHaveInput: &busMayHaveInput) {
            received = true
            guard let first = notice.first, let kind = first.first, kind <= 1 else { continue }
            busConnections.update()
            forgetClosedBusConnections()
            let topic = first.dropFirst()
            if zap != nil { note(sender, .bus) }
            var problem = BusSubscriptionRule.problem(topic)
            let malformed = problem != nil
            if problem == nil, kind == 1, let policy = core.policy, let key = sender.userID {
                problem = BusSubscriptionRule.denial(topic, key: key, in: policy)
            }
            let connection = busConnections.number(of: sender.fileDescriptor)
            switch subscriptions.take(
                connection, subscribe: kind == 1, topic: topic, problem: problem, malformed: malformed)
            {
            case .apply: break
            case .ignore: continue
            case .refuse(let why, let first):
                if first { log("refused a bus subscription: \(why)") }
                continue
            case .cutOff(let why):
                shutdown(sender.fileDescriptor, Int32(SHUT_RDWR))
                log(
                    "closed a bus connection\(sender.userID.map { " of key \(core.policy?.names[$0] ?? $0)" } ?? ""): \(why)"
                )
                continue
            }
            do {
                try bus.set(kind == 1 ? .subscribe : .unsubscribe, Array(topic))
            } catch {
                log("could not apply a bus subscription: \(error)")
            }
            let refused =
                kind == 1 && topic.first == UInt8(ascii: "!") ? subscriptions.refusals(of: connection) : []
            core.handleBusNotice(
                first, refused: refused, subscriber: zap == nil ? nil : sender.userID, now: SystemClock.now,
                into: &output)
        }
        return received
    }

    /// Forgets the bus connections that closed; memory goes back to the system shortly after one
    /// that held or sent much.
    func forgetClosedBusConnections() {
        for closed in busConnections.takeClosed() where subscriptions.forget(closed.number) {
            trimDue = SystemClock.monotonicNanoseconds() &+ 50_000_000
        }
    }

    /// The broker's name for a control peer: its routing id, then the number of its connection
    /// (4 bytes), so that a routing id reused by another connection names another peer.
    static func peer(_ routingID: [UInt8], on connection: UInt32) -> [UInt8] {
        var peer = routingID
        peer.reserveCapacity(routingID.count + 4)
        withUnsafeBytes(of: connection.bigEndian) { peer.append(contentsOf: $0) }
        return peer
    }
}
