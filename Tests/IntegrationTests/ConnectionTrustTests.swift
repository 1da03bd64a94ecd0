import Foundation
import Lifeline
import LifelineProtocol
import Testing
import ZeroMQ

/// What a peer gets by reusing another's routing id (nothing), and what refused or excessive bus
/// subscriptions cost the broker (a bounded amount, given back when the peer leaves).
@Suite(
    "Real processes: a connection is not its routing id; subscriptions are bounded", .serialized,
    .timeLimit(.minutes(3)))
struct ConnectionTrustTests {
    /// A raw DEALER with a routing id of its own choosing.
    static func dealer(_ routingID: String, to endpoint: String) throws -> ZMQSocket {
        let socket = try ZMQSocket(ZMQContext.shared, type: .dealer)
        try socket.set(.linger, 0)
        try socket.set(.routingID, Array(routingID.utf8))
        try socket.connect(endpoint)
        return socket
    }

    /// Sends a request and returns the reply to it (other messages are skipped), or nil after `seconds`.
    static func ask(_ socket: ZMQSocket, _ command: String, id: String, _ header: String, seconds: Double = 5)
        throws -> [[UInt8]]?
    {
        _ = try socket.send(
            frames: [Array("LLC01".utf8), Array(command.utf8), Array(id.utf8), Array(header.utf8)])
        return try next(socket, seconds: seconds) {
            $0.count >= 4 && $0[1] == Array("REPLY".utf8) && $0[2] == Array(id.utf8)
        }
    }

    /// The next message that satisfies `wanted` within `seconds`.
    static func next(_ socket: ZMQSocket, seconds: Double, where wanted: ([[UInt8]]) -> Bool) throws
        -> [[UInt8]]?
    {
        let deadline = Date().addingTimeInterval(seconds)
        while Date() < deadline {
            var poller = ZMQPoller()
            poller.add(socket)
            guard try poller.poll(timeoutMilliseconds: 100) > 0 else { continue }
            while let frames = try socket.receiveFrames(dontWait: true) {
                if wanted(frames) { return frames }
            }
        }
        return nil
    }

    @Test(
        "a new connection that takes a dead service's routing id inherits nothing: no CALL meant for the old one, its heartbeats keep no name alive"
    )
    func routingIDIsNotIdentity() async throws {
        let broker = try await BrokerProcess()
        defer { broker.process.kill() }
        let (control, busEndpoint) = (broker.control, broker.bus)
        // Alice registers rid.svc on a connection with routing id R, then dies.
        let registered = try await OffPool.run { try Self.registerAndDie(control: control, bus: busEndpoint) }
        #expect(registered, "alice registered rid.svc")
        let call = Task {
            try await broker.cli(["call", "rid.svc", "echo", #"{"secret": "for alice"}"#, "--timeout", "2s"])
        }
        // Mallory takes R and heartbeats as R for 8 s, watching for what was meant for alice.
        let stolen = try await OffPool.run { try Self.impersonate(control: control, seconds: 8) }
        let result = try await call.value
        #expect(result.status != 0, "the call was not answered by another connection: \(result.output)")
        #expect(stolen == 0, "mallory received \(stolen) CALL(s) meant for alice")
        // Alice's name expired after her heartbeat window (5 s) although mallory heartbeat as R.
        let deadline = ContinuousClock.now + .seconds(5)
        while try await broker.cli(["lookup", "rid.svc"]).status == 0 {
            #expect(ContinuousClock.now < deadline, "rid.svc still registered 13 s after alice died")
            if ContinuousClock.now >= deadline { break }
            try await Task.sleep(for: .milliseconds(100))  // polling with a deadline
        }
        try await broker.process.waitForLine(.stderr) { $0.contains("its connection has closed") }
    }

    /// Alice: a DEALER with routing id R registers `rid.svc` (heartbeat window 5 s), then closes.
    static func registerAndDie(control: String, bus busEndpoint: String) throws -> Bool {
        let marker = UUID().uuidString
        let bus = try ZMQSocket(ZMQContext.shared, type: .sub)
        defer { bus.close() }
        try bus.set(.linger, 0)
        try bus.connect(busEndpoint)
        try bus.set(.subscribe, Array("!\(marker)".utf8))
        let alice = try dealer("R", to: control)
        defer { alice.close() }
        let registered = try ask(
            alice, "REGISTER", id: "r1",
            #"{"name": "rid.svc", "instance": "\#(marker)", "attach": "\#(marker)", "methods": ["echo"], "heartbeat": {"intervalMs": 1000, "liveness": 5}}"#
        )
        return registered.map { String(decoding: $0[3], as: UTF8.self) } == "200"
    }

    /// Mallory: connects with routing id R (once the broker's ROUTER let alice's go: until then
    /// libzmq refuses a second connection with it, so each try is a new socket) and heartbeats as R
    /// for `seconds`; returns how many CALLs reached her.
    static func impersonate(control: String, seconds: Double) throws -> Int {
        var mallory: ZMQSocket?
        for attempt in 1...40 where mallory == nil {
            let socket = try dealer("R", to: control)
            if try ask(socket, "HELLO", id: "h\(attempt)", "{}", seconds: 0.25) != nil {
                mallory = socket
            } else {
                socket.close()
            }
        }
        guard let mallory else { throw HarnessError("mallory never got a connection with routing id R") }
        defer { mallory.close() }
        var stolen = 0
        let end = Date().addingTimeInterval(seconds)
        while Date() < end {
            _ = try mallory.send(
                frames: [Array("LLC01".utf8), Array("HEARTBEAT".utf8), [], []], dontWait: true)
            if try next(mallory, seconds: 0.2, where: { $0.count >= 2 && $0[1] == Array("CALL".utf8) }) != nil
            {
                stolen += 1
            }
        }
        return stolen
    }

    /// The resident set of the broker.
    static func resident(_ broker: BrokerProcess) throws -> Int {
        try MemoryLimitTests.residentKiB(broker.process.pid)
    }

    /// Sends `messages` (subscriptions) on one XSUB connection that does not reconnect, until the
    /// broker cuts it off (its log line); returns the broker's resident set then.
    static func flood(_ broker: BrokerProcess, _ messages: [[UInt8]], reason: String) async throws -> Int {
        let peer = try ZMQSocket(ZMQContext.shared, type: .xsub)
        defer { peer.close() }
        try peer.set(.linger, 0)
        try peer.set(.reconnectInterval, -1)
        try peer.connect(broker.bus)
        let earlier = broker.process.lines(.stderr).filter { $0.contains("closed a bus connection") }.count
        func cut() -> Bool {
            broker.process.lines(.stderr).filter { $0.contains("closed a bus connection") }.count > earlier
        }
        let deadline = ContinuousClock.now + .seconds(60)
        var sent = 0
        while sent < messages.count && !cut() && ContinuousClock.now < deadline {
            if try peer.send(frames: [messages[sent]], dontWait: true) {
                sent += 1
            } else {
                try await Task.sleep(for: .milliseconds(1))  // the peer's queue is full: the broker reads on
            }
        }
        try await broker.process.waitForLine(.stderr, seconds: 60) {
            $0.contains("closed a bus connection") && $0.contains(reason)
        }
        let during = try resident(broker)
        print(
            "bus flood: \(sent) of \(messages.count) subscriptions sent before the broker cut the connection off"
        )
        return during
    }

    @Test(
        "20 000 refused ~900-byte subscriptions and 80 000 marker subscriptions from one connection add < 10 MiB; the sender is cut off with a log line; memory comes back when it leaves"
    )
    func subscriptionsAreBounded() async throws {
        let broker = try await BrokerProcess()
        defer { broker.process.kill() }
        let client = try blockingClient(broker: broker.control)
        _ = try client.hello()
        let before = try Self.resident(broker)
        let long = try await Self.flood(
            broker,
            (0..<20_000).map {
                [1] + Array("com.example.\($0).".utf8) + [UInt8](repeating: UInt8(ascii: "x"), count: 880)
            },
            reason: "a topic is an event name")
        try await broker.process.waitForLine(.stderr) {
            $0.contains(
                "closed a bus connection: it sent a subscription no client sends (a topic is an event name")
        }
        let markers = try await Self.flood(
            broker, (0..<80_000).map { [1] + Array("!".utf8) + Array(String(format: "%032d", $0).utf8) },
            reason: "at most 1024 subscriptions")
        try await broker.process.waitForLine(.stderr) {
            $0.contains("a bus connection holds at most 1024 subscriptions")
        }
        _ = try client.hello()
        // Given back once the peers are gone (the broker trims its heap 50 ms after).
        var after = try Self.resident(broker)
        let deadline = Date().addingTimeInterval(5)
        while after - before >= 2 * 1024 && Date() < deadline {
            try await Task.sleep(for: .milliseconds(50))  // polling with a deadline
            after = try Self.resident(broker)
        }
        print(
            "broker resident set: \(before) KiB before; \(long) KiB when the ~900-byte flood was cut off, \(markers) KiB when the marker flood was; \(after) KiB after the peers left"
        )
        #expect(long - before < 10 * 1024 && markers - before < 10 * 1024)
        #expect(after - before < 10 * 1024)
        let subscriber = try client.subscribe(to: ["com.example.fine"])
        _ = try client.publish("com.example.fine")
        #expect(try subscriber.next(timeout: .seconds(10))?.name == "com.example.fine", "the bus goes on")
    }
}
