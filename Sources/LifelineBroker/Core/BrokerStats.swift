/// What the broker counts while it runs, for `lifeline stats` and `/metrics`: events, calls by
/// service and method (with their latency as the broker sees it: forward to answer), dispatches.
public struct BrokerStats: Sendable, Equatable {
    /// One service method's calls.
    public struct Calls: Sendable, Equatable {
        public var requests: UInt64 = 0
        /// Answers that were not 2xx, and timeouts.
        public var errors: UInt64 = 0
        public var timeouts: UInt64 = 0
        public var latency = LatencyHistogram()
    }

    public var published: UInt64 = 0
    /// Copies handed to the bus: one per subscriber of each published event.
    public var delivered: UInt64 = 0
    public var acknowledgements: UInt64 = 0
    public var dispatches: UInt64 = 0
    /// Dispatch steps answered, by service.
    public var dispatchSteps: [String: UInt64] = [:]
    /// Calls by service, then method.
    public var calls: [String: [String: Calls]] = [:]

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
