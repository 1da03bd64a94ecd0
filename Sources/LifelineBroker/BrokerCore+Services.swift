import LifelineProtocol

/// START: the broker tells a service to run its start hook — non-lazy services right after they
/// register, lazy ones (mPaaS lazyLoading) on their first lookup or call, which wait for it.
extension BrokerCore {
    /// Sends START to `name` unless it started or is starting.
    mutating func startService(_ name: String, now: UInt64, into output: inout [BrokerOutput]) {
        guard let entry = registry.entry(named: name),
            let id = starts.begin(
                name, deadline: deadline(now, configuration.serviceStartTimeoutMilliseconds))
        else { return }
        output.append(
            .send(
                peer: entry.peer,
                frames: ControlRequest(.start, requestID: id, header: ["name": .string(name)]).frames()))
    }

    /// A lazy service that has not started: START it and park `request`; returns true when parked.
    mutating func deferUntilStarted(
        _ name: String, _ request: ControlRequest, from peer: [UInt8], now: UInt64,
        into output: inout [BrokerOutput]
    ) -> Bool {
        guard let entry = registry.entry(named: name), entry.registration.lazy, !starts.isStarted(name) else {
            return false
        }
        if !starts.isStarting(name) { output.append(.log("starting lazy service \(name) on its first use")) }
        startService(name, now: now, into: &output)
        starts.park(request, from: peer, until: name)
        return true
    }

    /// The reply to a START.
    mutating func handleStartReply(_ reply: ControlReply, now: UInt64, into output: inout [BrokerOutput]) {
        guard let name = starts.service(answering: reply.requestID) else { return }
        if !reply.status.isSuccess { output.append(.log("\(name) failed to start: \(reply.errorMessage)")) }
        for (peer, request) in starts.finish(name) {
            handleRequest(request, from: peer, now: now, into: &output)
        }
    }

    mutating func expireStarts(now: UInt64, into output: inout [BrokerOutput]) {
        for name in starts.overdue(now: now) {
            output.append(
                .log(
                    "\(name) did not finish starting within \(configuration.serviceStartTimeoutMilliseconds) ms; going on"
                ))
            for (peer, request) in starts.finish(name) {
                handleRequest(request, from: peer, now: now, into: &output)
            }
        }
    }

    /// `name` left: requests that waited for its start fail.
    mutating func forgetStart(_ name: String, into output: inout [BrokerOutput]) {
        for (peer, request) in starts.forget(name) {
            let message = "service '\(name)' went away before it finished starting"
            send(peer, ControlReply.error(.unavailable, message, requestID: request.requestID), into: &output)
        }
    }
}
