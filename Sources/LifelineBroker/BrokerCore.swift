import LifelineProtocol

/// The broker's Context as a state machine: control messages, bus subscription notices and the clock
/// go in; messages to send and log lines come out. No sockets, no threads: time is an argument
/// (monotonic nanoseconds), so every rule can be tested with an injected clock.
public struct BrokerCore {
    enum AttachWaiter {
        case attach(peer: [UInt8], requestID: [UInt8])
        case register(peer: [UInt8], requestID: [UInt8], ServiceRegistration)
    }

    public let configuration: BrokerConfiguration
    public let identity: BrokerIdentity
    /// The endpoints the bus actually listens on (wildcards resolved); the first is announced.
    public let busEndpoints: [String]
    private let startMonotonic: UInt64
    private let startWall: UInt64

    private(set) var registry = ServiceRegistry()
    private var calls = PendingCalls()
    private var attachments = AttachTracker<AttachWaiter>()
    private var sequencer: EventSequencer
    private var nextHeartbeat: UInt64

    /// Creates the Context of a broker that started at `monotonic` / `wall` (nanoseconds).
    public init(
        configuration: BrokerConfiguration, identity: BrokerIdentity, busEndpoints: [String], monotonic: UInt64,
        wall: UInt64
    ) {
        self.configuration = configuration
        self.identity = identity
        self.busEndpoints = busEndpoints
        self.startMonotonic = monotonic
        self.startWall = wall
        self.sequencer = EventSequencer(epoch: wall & 0x7FFF_FFFF_FFFF_FFFF)
        self.nextHeartbeat = monotonic &+ configuration.heartbeat.intervalNanoseconds
    }

    /// This broker life's epoch.
    public var epoch: UInt64 { sequencer.epoch }
    /// The sequence of the last published event.
    public var sequence: UInt64 { sequencer.sequence }
    /// How many services are registered.
    public var serviceCount: Int { registry.count }

    private func wall(at now: UInt64) -> UInt64 { startWall &+ (now &- startMonotonic) }

    // MARK: Input

    /// Handles one message from the ROUTER: `peer` is its routing id, `frames` what follows it.
    public mutating func handleControl(
        peer: [UInt8], frames: ArraySlice<[UInt8]>, now: UInt64, into output: inout [BrokerOutput]
    ) {
        let size = frames.reduce(0) { $0 + $1.count }
        if size > configuration.maximumMessageBytes {
            let requestID = frames.count > 2 && frames[frames.startIndex + 2].count <= 255 ? frames[frames.startIndex + 2] : []
            refuse(
                peer,
                ProtocolError(
                    .payloadTooLarge, "message of \(size) bytes exceeds the limit of \(configuration.maximumMessageBytes) bytes",
                    requestID: requestID), into: &output)
            return
        }
        let message: ControlMessage
        do {
            message = try ControlMessage.decode(frames)
        } catch {
            refuse(peer, error, into: &output)
            return
        }
        registry.touch(peer: peer, now: now)
        switch message {
        case .reply(let reply): forwardServiceReply(reply, from: peer, into: &output)
        case .request(let request): handleRequest(request, from: peer, now: now, into: &output)
        }
    }

    /// Handles a subscription notice read from the XPUB socket.
    public mutating func handleBusNotice(_ notice: [UInt8], now: UInt64, into output: inout [BrokerOutput]) {
        guard let marker = AttachTracker<AttachWaiter>.token(inNotice: notice) else { return }
        guard marker.subscribed else {
            attachments.markerUnsubscribed(marker.token)
            return
        }
        for waiter in attachments.markerSubscribed(marker.token, now: now) {
            switch waiter {
            case .attach(let peer, let requestID): replyAttached(peer, requestID, into: &output)
            case .register(let peer, let requestID, let registration):
                completeRegistration(registration, peer: peer, requestID: requestID, now: now, into: &output)
            }
        }
    }

    /// Runs every timer that is due: heartbeats, service expiry, call and attach deadlines.
    public mutating func tick(now: UInt64, into output: inout [BrokerOutput]) {
        for entry in registry.removeExpired(now: now) {
            let silence = entry.registration.heartbeat.expiryNanoseconds / 1_000_000
            output.append(.log("service \(entry.registration.name) (pid \(entry.registration.pid)) expired: silent for \(silence) ms"))
            serviceStopped(entry.registration, reason: "expired", now: now, into: &output)
        }
        for call in calls.removeExpired(now: now) {
            let message = "\(call.service).\(call.method) did not answer within \(call.timeoutMilliseconds) ms"
            output.append(.log("call timed out: \(message)"))
            send(call.client, ControlReply.error(.timeout, message, requestID: call.clientRequestID), into: &output)
        }
        for (token, waiter) in attachments.removeExpired(now: now) {
            let (peer, requestID, what): ([UInt8], [UInt8], String)
            switch waiter {
            case .attach(let p, let r): (peer, requestID, what) = (p, r, "ATTACH")
            case .register(let p, let r, let registration): (peer, requestID, what) = (p, r, "REGISTER of '\(registration.name)'")
            }
            let message =
                "\(what) timed out: the bus subscription '!\(token)' did not arrive within "
                + "\(configuration.attachTimeoutMilliseconds) ms; subscribe to it on \(busEndpoints.first ?? "the bus") first"
            output.append(.log(message))
            send(peer, ControlReply.error(.timeout, message, requestID: requestID), into: &output)
        }
        if now >= nextHeartbeat {
            for peer in registry.peers { output.append(.send(peer: peer, frames: Self.heartbeatFrames)) }
            nextHeartbeat = now &+ configuration.heartbeat.intervalNanoseconds
        }
    }

    /// When ``tick(now:into:)`` next has work, in monotonic nanoseconds.
    public var nextDeadline: UInt64 {
        [nextHeartbeat, registry.nextExpiry.map { $0 &+ 1 }, calls.nextDeadline, attachments.nextDeadline]
            .compactMap { $0 }.min()!
    }

    /// Tells every registered service that the broker is leaving.
    public func shutdown(reason: String, into output: inout [BrokerOutput]) {
        let request = ControlRequest(.disconnect, header: ["reason": .string(reason)])
        for peer in registry.peers { output.append(.send(peer: peer, frames: request.frames())) }
    }

    static let heartbeatFrames = ControlRequest(.heartbeat).frames()

    // MARK: Requests

    private mutating func handleRequest(
        _ request: ControlRequest, from peer: [UInt8], now: UInt64, into output: inout [BrokerOutput]
    ) {
        let id = request.requestID
        switch request.command {
        case .heartbeat:
            if !registry.isKnown(peer: peer) && !attachments.isWaiting({ $0.isRegistration(of: peer) }) {
                let disconnect = ControlRequest(.disconnect, header: ["reason": "unknown peer: register again"])
                output.append(.send(peer: peer, frames: disconnect.frames()))
            }
        case .hello: send(peer, ControlReply(requestID: id, json: helloBody), into: &output)
        case .register: register(request, from: peer, now: now, into: &output)
        case .unregister: unregister(request, from: peer, now: now, into: &output)
        case .lookup: lookup(request, from: peer, now: now, into: &output)
        case .list:
            let records = registry.entries.values.sorted { $0.registration.name < $1.registration.name }
                .map { record(of: $0, now: now).json }
            send(peer, ControlReply(requestID: id, json: ["services": .array(records)]), into: &output)
        case .call: call(request, from: peer, now: now, into: &output)
        case .publish: publish(request, from: peer, now: now, into: &output)
        case .attach:
            guard let token = request.header["token"]?.stringValue, !token.isEmpty else {
                refuse(peer, ProtocolError(.badRequest, "ATTACH needs a string 'token'", requestID: id), into: &output)
                return
            }
            if attachments.hasSeen(token) {
                replyAttached(peer, id, into: &output)
            } else {
                attachments.wait(for: token, .attach(peer: peer, requestID: id), deadline: deadline(now, configuration.attachTimeoutMilliseconds))
            }
        default:
            refuse(peer, ProtocolError(.badRequest, "\(request.command) is sent by the broker only", requestID: id), into: &output)
        }
    }

    private var helloBody: JSONValue {
        [
            "protocol": .string(ProtocolID.control), "bus": .string(busEndpoints.first ?? ""),
            "buses": .array(busEndpoints.map { .string($0) }), "epoch": .int(Int64(epoch)),
            "sequence": .int(Int64(sequence)), "heartbeat": configuration.heartbeat.json,
            "maxMessageBytes": .int(Int64(configuration.maximumMessageBytes)),
            "broker": ["pid": .int(Int64(identity.pid)), "host": .string(identity.host), "version": .string(identity.version)],
        ]
    }

    private func replyAttached(_ peer: [UInt8], _ requestID: [UInt8], into output: inout [BrokerOutput]) {
        let body: JSONValue = ["bus": .string(busEndpoints.first ?? ""), "epoch": .int(Int64(epoch)), "sequence": .int(Int64(sequence))]
        send(peer, ControlReply(requestID: requestID, json: body), into: &output)
    }

    private mutating func register(_ request: ControlRequest, from peer: [UInt8], now: UInt64, into output: inout [BrokerOutput]) {
        let registration: ServiceRegistration
        do {
            registration = try ServiceRegistration(json: request.header)
        } catch {
            refuse(peer, ProtocolError(error.status, error.message, requestID: request.requestID), into: &output)
            return
        }
        if let existing = registry.entry(named: registration.name), existing.registration.instance != registration.instance {
            if case .refused(let reason) = registry.admit(registration, peer: peer, now: now) {
                output.append(.log("refused registration of \(registration.name) by pid \(registration.pid): name taken"))
                send(peer, ControlReply.error(.conflict, reason, requestID: request.requestID), into: &output)
            }
            return
        }
        if attachments.hasSeen(registration.attachToken) {
            completeRegistration(registration, peer: peer, requestID: request.requestID, now: now, into: &output)
        } else {
            attachments.wait(
                for: registration.attachToken, .register(peer: peer, requestID: request.requestID, registration),
                deadline: deadline(now, configuration.attachTimeoutMilliseconds))
        }
    }

    private mutating func completeRegistration(
        _ registration: ServiceRegistration, peer: [UInt8], requestID: [UInt8], now: UInt64, into output: inout [BrokerOutput]
    ) {
        switch registry.admit(registration, peer: peer, now: now) {
        case .refused(let reason):
            send(peer, ControlReply.error(.conflict, reason, requestID: requestID), into: &output)
            return
        case .added:
            output.append(
                .log("registered \(registration.name) (pid \(registration.pid) on \(registration.host); events: \(registration.events.count), methods: \(registration.methods.count))"))
            publishRuntime(
                .serviceDidStart,
                ["name": .string(registration.name), "pid": .int(Int64(registration.pid)), "host": .string(registration.host)],
                now: now, into: &output)
        case .renewed:
            output.append(.log("\(registration.name) (pid \(registration.pid)) registered again after a reconnect"))
        }
        let body: JSONValue = [
            "epoch": .int(Int64(epoch)), "sequence": .int(Int64(sequence)), "bus": .string(busEndpoints.first ?? ""),
            "heartbeat": configuration.heartbeat.json,
        ]
        send(peer, ControlReply(requestID: requestID, json: body), into: &output)
    }

    private mutating func unregister(_ request: ControlRequest, from peer: [UInt8], now: UInt64, into output: inout [BrokerOutput]) {
        guard let name = request.header["name"]?.stringValue else {
            refuse(peer, ProtocolError(.badRequest, "UNREGISTER needs a string 'name'", requestID: request.requestID), into: &output)
            return
        }
        guard let entry = registry.entry(named: name) else {
            send(peer, ControlReply.error(.notFound, "no service named '\(name)'", requestID: request.requestID), into: &output)
            return
        }
        let sameInstance = request.header["instance"]?.stringValue == entry.registration.instance
        guard entry.peer == peer || sameInstance else {
            let message = "service '\(name)' belongs to pid \(entry.registration.pid) on '\(entry.registration.host)'; only its owner may unregister it"
            send(peer, ControlReply.error(.forbidden, message, requestID: request.requestID), into: &output)
            return
        }
        registry.remove(name)
        output.append(.log("unregistered \(name) (pid \(entry.registration.pid))"))
        serviceStopped(entry.registration, reason: "unregistered", now: now, into: &output)
        send(peer, ControlReply(requestID: request.requestID, json: ["name": .string(name)]), into: &output)
    }

    private func lookup(_ request: ControlRequest, from peer: [UInt8], now: UInt64, into output: inout [BrokerOutput]) {
        guard let name = request.header["name"]?.stringValue else {
            refuse(peer, ProtocolError(.badRequest, "LOOKUP needs a string 'name'", requestID: request.requestID), into: &output)
            return
        }
        guard let entry = registry.entry(named: name) else {
            send(peer, ControlReply.error(.notFound, "no service named '\(name)'", requestID: request.requestID), into: &output)
            return
        }
        send(peer, ControlReply(requestID: request.requestID, json: record(of: entry, now: now).json), into: &output)
    }

    private func record(of entry: ServiceRegistry.Entry, now: UInt64) -> ServiceRecord {
        ServiceRecord(
            registration: entry.registration, registeredAtMilliseconds: Int64(wall(at: entry.registeredAt) / 1_000_000),
            lastSeenMillisecondsAgo: Int64((now &- entry.lastSeen) / 1_000_000),
            uptimeMilliseconds: Int64((now &- entry.registeredAt) / 1_000_000))
    }

    private mutating func call(_ request: ControlRequest, from peer: [UInt8], now: UInt64, into output: inout [BrokerOutput]) {
        let id = request.requestID
        guard let service = request.header["service"]?.stringValue, let method = request.header["method"]?.stringValue else {
            refuse(peer, ProtocolError(.badRequest, "CALL needs string fields 'service' and 'method'", requestID: id), into: &output)
            return
        }
        var timeout = configuration.defaultCallTimeoutMilliseconds
        if let requested = request.header["timeoutMs"] {
            guard let value = requested.intValue, value >= 1, value <= configuration.maximumCallTimeoutMilliseconds else {
                let message = "CALL timeoutMs must be an integer within 1...\(configuration.maximumCallTimeoutMilliseconds)"
                refuse(peer, ProtocolError(.badRequest, message, requestID: id), into: &output)
                return
            }
            timeout = Int(value)
        }
        guard let entry = registry.entry(named: service) else {
            send(peer, ControlReply.error(.notFound, "no service named '\(service)'", requestID: id), into: &output)
            return
        }
        guard entry.registration.methods.contains(method) else {
            let known = entry.registration.methods.isEmpty ? "none" : entry.registration.methods.joined(separator: ", ")
            let message = "service '\(service)' has no method '\(method)'; it answers: \(known)"
            send(peer, ControlReply.error(.notFound, message, requestID: id), into: &output)
            return
        }
        let forwardID = calls.add(
            PendingCalls.Call(
                client: peer, clientRequestID: id, service: service, method: method, deadline: deadline(now, timeout),
                timeoutMilliseconds: timeout))
        let forward = ControlRequest(
            .call, requestID: forwardID,
            header: ["service": .string(service), "method": .string(method), "timeoutMs": .int(Int64(timeout))],
            payload: request.payload ?? [])
        output.append(.send(peer: entry.peer, frames: forward.frames()))
    }

    private mutating func forwardServiceReply(_ reply: ControlReply, from peer: [UInt8], into output: inout [BrokerOutput]) {
        guard let call = calls.complete(reply.requestID) else {
            output.append(.log("dropped a late or unknown reply '\(String(decoding: reply.requestID, as: UTF8.self))' (status \(reply.status.rawValue))"))
            return
        }
        var forwarded = reply
        forwarded.requestID = call.clientRequestID
        send(call.client, forwarded, into: &output)
    }

    private mutating func publish(_ request: ControlRequest, from peer: [UInt8], now: UInt64, into output: inout [BrokerOutput]) {
        let id = request.requestID
        guard let text = request.header["event"]?.stringValue else {
            refuse(peer, ProtocolError(.badRequest, "PUBLISH needs a string 'event'", requestID: id), into: &output)
            return
        }
        let payloadBytes = request.payload ?? []
        let name = EventName(rawValue: text)
        if let problem = Self.publicationProblem(name, payload: payloadBytes) {
            send(peer, ControlReply.error(problem.status, problem.message, requestID: id), into: &output)
            return
        }
        let flags: UInt64 = request.header["ack"]?.boolValue == true ? 1 : 0
        let header = publishFrames(name, payload: payloadBytes.isEmpty ? Array("{}".utf8) : payloadBytes, flags: flags, now: now, into: &output)
        var body = JSONObjectWriter()
        body.add("epoch", Int64(header.epoch))
        body.add("event", text)
        body.add("sequence", Int64(header.sequence))
        body.add("subscribers", Int64(registry.subscriberCount(of: name)))
        send(peer, ControlReply(requestID: id, status: .ok, body: body.finish()), into: &output)
    }

    /// Why a client may not publish `name` with `payload`, or nil. Custom events need only a JSON
    /// object, checked without building it; catalogued events have their fields checked.
    static func publicationProblem(_ name: EventName, payload: [UInt8]) -> ProtocolError? {
        do {
            if name.isCustom {
                if let problem = EventName.syntaxProblem(in: name.rawValue) { return ProtocolError(.badRequest, problem) }
                if payload.isEmpty { return nil }
                let type = try JSONValidator.topLevelType(of: payload)
                if type != "object" {
                    return ProtocolError(.unprocessable, "the payload of \(name) must be a JSON object, not \(type)")
                }
                return nil
            }
            try EventCatalog.validatePublication(name, payload: payload.isEmpty ? .emptyObject : try JSONParser.parse(payload))
            return nil
        } catch let error as JSONParseError {
            return ProtocolError(.badRequest, "the payload of \(name) is not JSON: \(error)")
        } catch let error as EventValidationError {
            let status: Status = error.kind == .reserved ? .forbidden : (error.kind == .badPayload ? .unprocessable : .badRequest)
            return ProtocolError(status, error.message)
        } catch {
            return ProtocolError(.badRequest, "\(error)")
        }
    }

    @discardableResult
    private mutating func publishFrames(
        _ name: EventName, payload: [UInt8], flags: UInt64 = 0, now: UInt64, into output: inout [BrokerOutput]
    ) -> BusHeader {
        let header = sequencer.next(name, flags: flags, wall: wall(at: now), monotonic: now)
        output.append(.publish(BusMessage(name: name, header: header, payload: payload).frames()))
        return header
    }

    private mutating func publishRuntime(_ name: EventName, _ payload: JSONValue, now: UInt64, into output: inout [BrokerOutput]) {
        publishFrames(name, payload: JSONWriter.encode(payload), now: now, into: &output)
    }

    private mutating func serviceStopped(
        _ registration: ServiceRegistration, reason: String, now: UInt64, into output: inout [BrokerOutput]
    ) {
        for call in calls.removeAll(for: registration.name) {
            let message = "service '\(registration.name)' went away (\(reason)) before answering \(call.method)"
            send(call.client, ControlReply.error(.unavailable, message, requestID: call.clientRequestID), into: &output)
        }
        publishRuntime(.serviceDidStop, ["name": .string(registration.name), "reason": .string(reason)], now: now, into: &output)
    }

    // MARK: Helpers

    private func deadline(_ now: UInt64, _ milliseconds: Int) -> UInt64 { now &+ UInt64(milliseconds) * 1_000_000 }

    private func send(_ peer: [UInt8], _ reply: ControlReply, into output: inout [BrokerOutput]) {
        output.append(.send(peer: peer, frames: reply.frames()))
    }

    private func refuse(_ peer: [UInt8], _ error: ProtocolError, into output: inout [BrokerOutput]) {
        output.append(.log("refused a message from peer \(Self.describe(peer)): \(error.message)"))
        send(peer, ControlReply.error(error.status, error.message, requestID: error.requestID), into: &output)
    }

    /// A routing id as hex, for log lines.
    static func describe(_ peer: [UInt8]) -> String {
        peer.map { byte in
            let digits = String(byte, radix: 16)
            return digits.count == 1 ? "0" + digits : digits
        }.joined()
    }
}

extension BrokerCore.AttachWaiter {
    func isRegistration(of peer: [UInt8]) -> Bool {
        if case .register(let waiting, _, _) = self { return waiting == peer }
        return false
    }
}
