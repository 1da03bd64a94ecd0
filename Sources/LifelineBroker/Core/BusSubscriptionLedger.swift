/// What each bus connection subscribed to and how often it was refused, so that no connection can
/// make the broker (and libzmq's subscription tries, which keep every notice a connection sent until
/// it closes) hold more than a bounded amount: a connection holds at most ``limit`` topics, one
/// refused ``cutOffAfter`` times is cut off, and one that sends a malformed notice (a topic longer
/// than any event name, which no Lifeline client sends) is cut off at once — such notices are what
/// costs libzmq's tries most per notice. Connection 0 (not reported by the monitor: inproc) is not
/// limited.
struct BusSubscriptionLedger {
    enum Verdict: Equatable {
        /// Apply the notice on the XPUB.
        case apply
        /// Refuse it, saying why (logged for a connection's first refusal only).
        case refuse(String, first: Bool)
        /// Refuse it and close the connection, saying why.
        case cutOff(String)
        /// The connection is being cut off: drop the notice silently.
        case ignore
    }

    /// The most topics one connection may hold.
    let limit: Int
    /// The refusals after which a connection is closed.
    let cutOffAfter: Int
    private var topics: [UInt32: Set<[UInt8]>] = [:]
    private var refusals: [UInt32: Int] = [:]
    /// Why each refused subscription of a connection was refused, in order (fewer than
    /// ``cutOffAfter``: the connection is closed then), for the ATTACH that follows them.
    private var reasons: [UInt32: [String]] = [:]
    private var cut: Set<UInt32> = []

    /// A ledger that lets a connection hold `limit` topics and closes it at its `cutOffAfter`th
    /// refusal.
    init(limit: Int, cutOffAfter: Int = 32) {
        self.limit = limit
        self.cutOffAfter = cutOffAfter
    }

    /// Takes a subscription (or, `subscribe` false, an unsubscription) notice of `connection`;
    /// `problem` is why the bus's rules refuse it (nil when they accept it); `malformed`, that no
    /// Lifeline client sends such a notice.
    mutating func take(
        _ connection: UInt32, subscribe: Bool, topic: ArraySlice<UInt8>, problem: String?,
        malformed: Bool = false
    ) -> Verdict {
        if cut.contains(connection) { return .ignore }
        if let problem, malformed, connection != 0 {
            cut.insert(connection)
            return .cutOff("it sent a subscription no client sends (\(problem))")
        }
        if let problem { return refuse(connection, problem) }
        guard connection != 0 else { return .apply }
        if !subscribe {
            topics[connection]?.remove(Array(topic))
            return .apply
        }
        let key = Array(topic)
        if topics[connection]?.contains(key) == true { return .apply }
        guard topics[connection]?.count ?? 0 < limit else {
            return refuse(connection, "a bus connection holds at most \(limit) subscriptions")
        }
        topics[connection, default: []].insert(key)
        return .apply
    }

    private mutating func refuse(_ connection: UInt32, _ why: String) -> Verdict {
        guard connection != 0 else { return .refuse(why, first: true) }
        let count = refusals[connection, default: 0] + 1
        refusals[connection] = count
        reasons[connection, default: []].append(why)
        if count >= cutOffAfter {
            cut.insert(connection)
            return .cutOff("it sent \(count) subscriptions the bus refuses (the last: \(why))")
        }
        return .refuse(why, first: count == 1)
    }

    /// Forgets a closed connection; returns whether it held or sent much (worth giving memory back).
    mutating func forget(_ connection: UInt32) -> Bool {
        let held = topics.removeValue(forKey: connection)?.count ?? 0
        let refused = refusals.removeValue(forKey: connection) ?? 0
        reasons[connection] = nil
        let wasCut = cut.remove(connection) != nil
        return held >= 64 || refused > 0 || wasCut
    }

    /// Why the subscriptions `connection` sent so far were refused, oldest first.
    func refusals(of connection: UInt32) -> [String] { reasons[connection] ?? [] }

    /// How many topics `connection` holds.
    func count(of connection: UInt32) -> Int { topics[connection]?.count ?? 0 }
}
