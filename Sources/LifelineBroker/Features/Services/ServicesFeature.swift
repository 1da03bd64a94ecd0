import LifelineProtocol

/// LOOKUP and CALL, and the services' start hooks (DTService start): a CALL is forwarded to the
/// service and its answer passed back unchanged within a deadline; a non-lazy service is STARTed when
/// it registers after the boot (or when the boot ends), a lazy one on its first LOOKUP or CALL, which
/// wait for it.
struct ServicesFeature: BrokerFeature {
    /// A call forwarded to a service and not yet answered.
    struct ForwardedCall {
        var client: [UInt8]
        var clientRequestID: [UInt8]
        var service: String
        var method: String
        var timeoutMilliseconds: Int
        var forwardedAt: UInt64
    }

    private var calls: [UInt64: ForwardedCall] = [:]
    /// START requests in flight: key → service.
    private var starting: [UInt64: String] = [:]
    /// Requests that wait for a lazy service's start.
    private var parked: [String: [(peer: [UInt8], id: [UInt8], request: ClientRequest)]] = [:]
    private var keys = KeyCounter()

    mutating func handle(_ request: ClientRequest, from peer: [UInt8], id: [UInt8], in core: inout BrokerCore)
    {
        switch request {
        case .lookup(let name):
            guard let entry = core.registry.entry(named: name) else {
                core.failMissingService(peer, id, name)
                return
            }
            if park(request, for: name, from: peer, id: id, in: &core) { return }
            core.reply(peer, id, core.record(of: entry).json)
        case .call(let call): forward(call, from: peer, id: id, in: &core)
        default: break
        }
    }

    private mutating func forward(
        _ call: ServiceCall, from peer: [UInt8], id: [UInt8], in core: inout BrokerCore
    ) {
        let timeout = call.timeoutMilliseconds ?? core.configuration.defaultCallTimeout.wholeMilliseconds
        guard timeout <= core.configuration.maximumCallTimeout.wholeMilliseconds else {
            core.refuse(
                peer,
                ProtocolError(
                    .badRequest,
                    "CALL timeoutMs must be an integer within 1...\(core.configuration.maximumCallTimeout.wholeMilliseconds)",
                    requestID: id))
            return
        }
        guard let entry = core.registry.entry(named: call.service) else {
            core.failMissingService(peer, id, call.service)
            return
        }
        if park(.call(call), for: call.service, from: peer, id: id, in: &core) { return }
        guard entry.registration.methods.contains(call.method) else {
            let methods = entry.registration.methods
            let known = methods.isEmpty ? "none" : methods.joined(separator: ", ")
            core.fail(
                peer, id, .notFound,
                "service '\(call.service)' has no method '\(call.method)'; it answers: \(known)")
            return
        }
        let key = keys.next()
        calls[key] = ForwardedCall(
            client: peer, clientRequestID: id, service: call.service, method: call.method,
            timeoutMilliseconds: timeout, forwardedAt: core.nanoseconds)
        let forwardID = core.correlator.open(
            .services, key: key, peer: entry.peer, deadline: core.deadline(timeout))
        var forwarded = call
        forwarded.timeoutMilliseconds = timeout
        core.send(entry.peer, frames: forwarded.frames(id: forwardID))
    }

    // MARK: Starts

    /// A lazy service that has not started: START it and park `request`; returns true when parked.
    private mutating func park(
        _ request: ClientRequest, for name: String, from peer: [UInt8], id: [UInt8], in core: inout BrokerCore
    ) -> Bool {
        guard let entry = core.registry.entry(named: name), entry.registration.lazy, !core.isStarted(name)
        else {
            return false
        }
        if core.starts[name] == nil { core.log("starting lazy service \(name) on its first use") }
        start(name, in: &core)
        parked[name, default: []].append((peer, id, request))
        return true
    }

    /// Sends START to `name` unless it started or is starting.
    private mutating func start(_ name: String, in core: inout BrokerCore) {
        guard let entry = core.registry.entry(named: name), core.starts[name] == nil else { return }
        core.starts[name] = .starting
        let key = keys.next()
        starting[key] = name
        let id = core.correlator.open(
            .services, key: key, peer: entry.peer,
            deadline: core.deadline(core.configuration.serviceStartTimeout))
        core.send(entry.peer, .start(name: name), id: id)
    }

    /// `name` started (or gave up): the requests that waited for it go on.
    private mutating func finishStart(_ name: String, in core: inout BrokerCore) {
        core.starts[name] = .started
        for (peer, id, request) in parked.removeValue(forKey: name) ?? [] {
            handle(request, from: peer, id: id, in: &core)
        }
    }

    // MARK: Answers, expiries, announcements

    mutating func answered(_ wait: Correlator.Entry, with reply: ControlReply, in core: inout BrokerCore) {
        if let call = calls.removeValue(forKey: wait.key) {
            core.stats.recordCall(
                service: call.service, method: call.method, nanoseconds: core.nanoseconds &- call.forwardedAt,
                success: reply.status.isSuccess, timedOut: false)
            Self.trace(call, status: reply.status, in: &core)
            var forwarded = reply
            forwarded.requestID = call.clientRequestID
            core.send(call.client, forwarded)
        } else if let name = starting.removeValue(forKey: wait.key) {
            if !reply.status.isSuccess { core.log("\(name) failed to start: \(reply.errorMessage)") }
            finishStart(name, in: &core)
        }
    }

    /// While a TRACE lease is held, a finished call goes on the bus as `callDidFinish`.
    private static func trace(_ call: ForwardedCall, status: Status, in core: inout BrokerCore) {
        guard core.tracing else { return }
        core.publishRuntime(
            .callDidFinish,
            [
                "service": .string(call.service), "method": .string(call.method),
                "status": .int(Int64(status.rawValue)),
                "durationMs": .double(Double(core.nanoseconds &- call.forwardedAt) / 1e6),
            ])
    }

    mutating func expired(_ wait: Correlator.Entry, in core: inout BrokerCore) {
        if let call = calls.removeValue(forKey: wait.key) {
            let message =
                "\(call.service).\(call.method) did not answer within \(call.timeoutMilliseconds) ms"
            core.log("call timed out: \(message)")
            core.stats.recordCall(
                service: call.service, method: call.method, nanoseconds: core.nanoseconds &- call.forwardedAt,
                success: false, timedOut: true)
            Self.trace(call, status: .timeout, in: &core)
            core.fail(call.client, call.clientRequestID, .timeout, message)
        } else if let name = starting.removeValue(forKey: wait.key) {
            core.log(
                "\(name) did not finish starting within \(core.configuration.serviceStartTimeout.wholeMilliseconds) ms; going on"
            )
            finishStart(name, in: &core)
        }
    }

    mutating func react(to announcement: Announcement, in core: inout BrokerCore) {
        switch announcement {
        case .registered(let registration, _):
            if !registration.lazy && core.servicesStartAtOnce { start(registration.name, in: &core) }
        case .started(let service): finishStart(service, in: &core)
        case .bootSettled:
            let waiting = core.registry.entries.values.filter {
                !$0.registration.lazy && core.starts[$0.registration.name] == nil
            }
            for entry in waiting.sorted(by: { $0.order < $1.order }) {
                start(entry.registration.name, in: &core)
            }
        case .gone(let registration, let reason):
            serviceGone(registration.name, reason: reason.rawValue, in: &core)
        default: break
        }
    }

    /// A service left: its calls fail, its start is forgotten, what waited for it fails.
    private mutating func serviceGone(_ name: String, reason: String, in core: inout BrokerCore) {
        for (key, call) in calls.sorted(by: { $0.key < $1.key }) where call.service == name {
            calls[key] = nil
            core.correlator.close(owner: .services, key: key)
            core.fail(
                call.client, call.clientRequestID, .unavailable,
                "service '\(name)' went away (\(reason)) before answering \(call.method)")
        }
        for (key, service) in starting where service == name {
            starting[key] = nil
            core.correlator.close(owner: .services, key: key)
        }
        core.starts[name] = nil
        for (peer, id, _) in parked.removeValue(forKey: name) ?? [] {
            core.fail(peer, id, .unavailable, "service '\(name)' went away before it finished starting")
        }
    }
}
