/// Calls forwarded to services and not yet answered, keyed by the broker's own request id.
struct PendingCalls {
    struct Call {
        var client: [UInt8]
        var clientRequestID: [UInt8]
        var service: String
        var method: String
        var deadline: UInt64
        var timeoutMilliseconds: Int
    }

    private var calls: [[UInt8]: Call] = [:]
    private var counter: UInt64 = 0

    /// Stores `call` and returns the request id to send to the service.
    mutating func add(_ call: Call) -> [UInt8] {
        counter += 1
        let id = Array("b\(counter)".utf8)
        calls[id] = call
        return id
    }

    /// Removes and returns the call answered by `id`.
    mutating func complete(_ id: [UInt8]) -> Call? { calls.removeValue(forKey: id) }

    /// Removes and returns calls whose deadline has passed, oldest deadline first.
    mutating func removeExpired(now: UInt64) -> [Call] {
        let expired = calls.filter { $0.value.deadline <= now }
        for id in expired.keys { calls[id] = nil }
        return expired.values.sorted { $0.deadline < $1.deadline }
    }

    /// Removes and returns the calls waiting on `service`.
    mutating func removeAll(for service: String) -> [Call] {
        let waiting = calls.filter { $0.value.service == service }
        for id in waiting.keys { calls[id] = nil }
        return Array(waiting.values)
    }

    var nextDeadline: UInt64? { calls.values.lazy.map(\.deadline).min() }
}
