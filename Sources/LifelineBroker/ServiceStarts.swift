import LifelineProtocol

/// Which services the broker has started (DTService start), which are starting, and the lookups and
/// calls that wait for a lazy service's start.
struct ServiceStarts {
    struct Starting {
        var requestID: [UInt8]
        var deadline: UInt64
    }

    private(set) var started: Set<String> = []
    private(set) var starting: [String: Starting] = [:]
    private(set) var deferred: [String: [(peer: [UInt8], request: ControlRequest)]] = [:]
    private var counter: UInt64 = 0

    func isStarted(_ name: String) -> Bool { started.contains(name) }
    func isStarting(_ name: String) -> Bool { starting[name] != nil }

    /// Marks `name` as starting; returns the START request id, or nil if it started or is starting.
    mutating func begin(_ name: String, deadline: UInt64) -> [UInt8]? {
        guard !started.contains(name), starting[name] == nil else { return nil }
        counter += 1
        let id = Array("t\(counter)".utf8)
        starting[name] = Starting(requestID: id, deadline: deadline)
        return id
    }

    func service(answering requestID: [UInt8]) -> String? {
        starting.first { $0.value.requestID == requestID }?.key
    }

    /// Parks a request until `name` has started.
    mutating func park(_ request: ControlRequest, from peer: [UInt8], until name: String) {
        deferred[name, default: []].append((peer, request))
    }

    /// `name` started (or gave up starting); returns the requests that waited for it.
    mutating func finish(_ name: String) -> [(peer: [UInt8], request: ControlRequest)] {
        starting[name] = nil
        started.insert(name)
        return deferred.removeValue(forKey: name) ?? []
    }

    /// `name` left: it must start again if it comes back; returns what waited for it.
    mutating func forget(_ name: String) -> [(peer: [UInt8], request: ControlRequest)] {
        started.remove(name)
        starting[name] = nil
        return deferred.removeValue(forKey: name) ?? []
    }

    /// Services whose start took too long.
    func overdue(now: UInt64) -> [String] { starting.filter { $0.value.deadline <= now }.map(\.key).sorted() }

    var nextDeadline: UInt64? { starting.values.lazy.map(\.deadline).min() }
}
