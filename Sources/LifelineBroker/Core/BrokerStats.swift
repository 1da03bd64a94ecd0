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
