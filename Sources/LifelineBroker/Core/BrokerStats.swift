/// What the broker counts while it runs, for `lifeline stats` and `/metrics`: events, calls by
/// service and method (with their latency as the broker sees it: forward to answer), dispatches.
package struct BrokerStats: Sendable, Equatable {
    /// One service method's calls.
    package struct Calls: Sendable, Equatable {
        package var requests: UInt64 = 0
        /// Answers that were not 2xx, and timeouts.
        package var errors: UInt64 = 0
        package var timeouts: UInt64 = 0
        package var latency = LatencyHistogram()
    }

    package var published: UInt64 = 0
    /// Copies handed to the bus: one per subscriber of each published event.
    package var delivered: UInt64 = 0
    package var acknowledgements: UInt64 = 0
    package var dispatches: UInt64 = 0
    /// Dispatch steps answered, by service.
    package var dispatchSteps: [String: UInt64] = [:]
    /// Calls by service, then method.
    package var calls: [String: [String: Calls]] = [:]
    /// Names whose last instance left, oldest first: their counts stay for `lifeline stats` until
    /// more than ``keptDeparted`` names have left after them (a broker whose names come and go does
    /// not grow with them).
    private(set) var departed: [String] = []
    /// How many departed names keep their counts.
    static let keptDeparted = 100

    /// The service `name` left (its last instance).
    mutating func serviceLeft(_ name: String) {
        departed.removeAll { $0 == name }
        departed.append(name)
        while departed.count > Self.keptDeparted {
            let oldest = departed.removeFirst()
            calls[oldest] = nil
            dispatchSteps[oldest] = nil
        }
    }

    /// The service `name` registered (again): its counts go on.
    mutating func serviceJoined(_ name: String) {
        if departed.contains(name) { departed.removeAll { $0 == name } }
    }

    mutating func recordCall(
        service: String, method: String, nanoseconds: UInt64, success: Bool, timedOut: Bool
    ) {
        var entry = calls[service]?[method] ?? Calls()
        entry.requests += 1
        if !success { entry.errors += 1 }
        if timedOut { entry.timeouts += 1 }
        entry.latency.record(nanoseconds: nanoseconds)
        calls[service, default: [:]][method] = entry
    }
}
