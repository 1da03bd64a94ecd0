import LifelineProtocol

@testable import LifelineBroker

/// Drives a ``Broker`` with an injected clock and collects what it sends.
struct BrokerHarness {
    var core: Broker
    var now: UInt64 = 1_000_000_000
    var output: [BrokerOutput] = []
    private var counter = 0

    init(configure: (inout BrokerConfiguration) -> Void = { _ in }) {
        var configuration = BrokerConfiguration()
        configure(&configuration)
        core = Broker(
            configuration: configuration, identity: BrokerIdentity(pid: 1, host: "test", version: "test"),
            busEndpoints: ["tcp://127.0.0.1:9"], monotonic: MonotonicInstant(nanoseconds: now),
            wall: 1_700_000_000_000_000_000)
    }

    /// A broker with the state directory `/state` restarted on the durable journal `bytes` (a new
    /// process: pid 2, a later wall clock).
    static func restarted(journal bytes: [UInt8]) -> BrokerHarness {
        var harness = BrokerHarness { $0.stateDirectory = "/state" }
        var configuration = BrokerConfiguration()
        configuration.stateDirectory = "/state"
        harness.core = Broker(
            configuration: configuration, identity: BrokerIdentity(pid: 2, host: "test", version: "test"),
            busEndpoints: ["tcp://127.0.0.1:9"], monotonic: harness.instant, wall: 1_700_000_100_000_000_000,
            journal: bytes)
        return harness
    }

    /// The injected clock as an instant.
    var instant: MonotonicInstant { MonotonicInstant(nanoseconds: now) }

    /// Lets `milliseconds` pass as the broker's loop would: a tick at least every heartbeat interval
    /// (what every tick sent is in ``output``).
    mutating func advance(milliseconds: Int) {
        output.removeAll()
        let target = now + UInt64(milliseconds) * 1_000_000
        let interval = UInt64(core.core.configuration.heartbeat.intervalMilliseconds) * 1_000_000
        repeat {
            now = min(target, now + interval)
            core.tick(now: instant, into: &output)
        } while now < target
    }

    /// Lets `milliseconds` pass with the broker not running (stopped, starved), then one tick.
    mutating func pause(milliseconds: Int) {
        output.removeAll()
        now += UInt64(milliseconds) * 1_000_000
        core.tick(now: instant, into: &output)
    }

    /// Sends a request from `peer` and returns the reply addressed to it, if one came at once.
    @discardableResult
    mutating func request(
        _ peer: String, _ command: Command, _ header: JSONValue = .emptyObject, payload: [UInt8]? = nil,
        key: String? = nil
    ) -> ControlReply? {
        counter += 1
        let request = ControlRequest(
            command, requestID: Array("r\(counter)".utf8), header: header, payload: payload)
        return raw(peer, request.frames(), key: key)
    }

    /// Sends `frames` from `peer` (with the CURVE public key `key`, when given).
    @discardableResult
    mutating func raw(_ peer: String, _ frames: [[UInt8]], key: String? = nil) -> ControlReply? {
        output.removeAll()
        core.handleControl(peer: Array(peer.utf8), frames: frames[...], key: key, now: instant, into: &output)
        return replies(to: peer).last
    }

    /// Replies sent to `peer` in the last step.
    func replies(to peer: String) -> [ControlReply] {
        messages(to: peer).compactMap { if case .reply(let reply) = $0 { reply } else { nil } }
    }

    /// Requests (CALL, HEARTBEAT, DISCONNECT) sent to `peer` in the last step.
    func requests(to peer: String) -> [ControlRequest] {
        messages(to: peer).compactMap { if case .request(let request) = $0 { request } else { nil } }
    }

    private func messages(to peer: String) -> [ControlMessage] {
        output.compactMap { item in
            guard case .send(let target, let frames) = item, target == Array(peer.utf8) else { return nil }
            return try? ControlMessage.decode(frames[...])
        }
    }

    /// Events published in the last step.
    var published: [BusMessage] {
        output.compactMap { item in
            guard case .publish(let message) = item else { return nil }
            return message
        }
    }

    mutating func subscribeMarker(_ token: String, subscriber: String? = nil) {
        output.removeAll()
        core.handleBusNotice(
            [1] + Array("!\(token)".utf8), subscriber: subscriber, now: instant, into: &output)
    }

    static func registration(
        _ name: String, instance: String? = nil, events: [EventName] = [.didEnterBackground],
        methods: [String] = ["status"],
        heartbeat: HeartbeatSettings = .standard, priorities: [EventName: Int] = [:],
        deadlines: [EventName: Int] = [:],
        resume: (UInt64, UInt64)? = nil
    ) -> JSONValue {
        var json = ServiceRegistration(
            name: name, instance: instance ?? "\(name)-1", pid: 100, host: "h", events: events,
            methods: methods,
            heartbeat: heartbeat, attachToken: instance ?? "\(name)-1", priorities: priorities,
            deadlines: deadlines
        ).json.objectValue!
        if let resume {
            json["resume"] = ["epoch": .int(Int64(resume.0)), "sequence": .int(Int64(resume.1))]
        }
        return .object(json)
    }

    /// Registers `name` from `peer`, marker first, and returns the reply.
    @discardableResult
    mutating func register(
        _ name: String, peer: String, instance: String? = nil, events: [EventName] = [.didEnterBackground],
        methods: [String] = ["status"],
        heartbeat: HeartbeatSettings = .standard, priorities: [EventName: Int] = [:],
        deadlines: [EventName: Int] = [:],
        resume: (UInt64, UInt64)? = nil
    ) -> ControlReply? {
        subscribeMarker(instance ?? "\(name)-1")
        return request(
            peer, .register,
            Self.registration(
                name, instance: instance, events: events, methods: methods, heartbeat: heartbeat,
                priorities: priorities,
                deadlines: deadlines, resume: resume))
    }

    /// The OFFERs sent to `peer` in the last step.
    func offers(to peer: String) -> [ControlRequest] { requests(to: peer).filter { $0.command == .offer } }

    /// Answers `offer` from `peer` with a callback result; returns what the last step produced.
    mutating func answer(
        _ offer: ControlRequest, from peer: String, _ result: String = "continue", payload: JSONValue? = nil,
        completion: JSONValue? = nil
    ) {
        var body: [String: JSONValue] = ["result": .string(result)]
        if let payload { body["payload"] = payload }
        if let completion { body["completion"] = completion }
        raw(peer, ControlReply(requestID: offer.requestID, json: .object(body)).frames())
    }
}
