import Foundation
import Lifeline
import LifelineCLI
import LifelineProtocol
import Testing
import ZeroMQ

/// What a hostile key tries once it is let in: names it does not own, keys rotated under it, other
/// hosts' sessions, what it may observe, and memory it can make the broker hold.
@Suite(
    "Real processes over CURVE: names belong to keys, reloads cut what they revoke", .serialized,
    .timeLimit(.minutes(2)))
struct KeyOwnershipTests {
    static let admin = SecurityTests.admin
    static let owner: JSONValue = ["register": ["svc*"], "subscribe": ["*"], "call": ["*"]]

    /// A bare CURVE DEALER, to see what the broker sends it unasked (DISCONNECT).
    final class RawClient {
        let socket: ZMQSocket

        init(_ keys: SecuritySetup, _ name: String, broker: BrokerProcess) throws {
            let credentials = try keys.credentials(name)
            socket = try ZMQSocket(ZMQContext.shared, type: .dealer)
            try socket.set(.linger, 0)
            try socket.secureAsClient(credentials.keys, serverKey: credentials.brokerKey)
            try socket.connect(broker.control)
        }

        deinit { socket.close() }

        /// Sends a request and returns the next message (nil after `milliseconds`).
        func ask(_ command: String, _ header: String = "{}", milliseconds: Int = 5000) throws -> [[UInt8]]? {
            // A DEALER with no connection would block on send: wait for one, or nothing is answered.
            var writable = ZMQPoller()
            writable.add(socket, events: .writable)
            guard try writable.poll(timeoutMilliseconds: milliseconds) > 0 else { return nil }
            let sent = try socket.send(
                frames: [Array("LLC01".utf8), Array(command.utf8), Array("r".utf8), Array(header.utf8)],
                dontWait: true)
            return sent ? try next(milliseconds: milliseconds) : nil
        }

        /// The next message, or nil after `milliseconds`.
        func next(milliseconds: Int) throws -> [[UInt8]]? {
            var poller = ZMQPoller()
            poller.add(socket)
            guard try poller.poll(timeoutMilliseconds: milliseconds) > 0 else { return nil }
            return try socket.receiveFrames(dontWait: true)
        }
    }

    static func text(_ frame: [UInt8]) -> String { String(decoding: frame, as: UTF8.self) }

    /// A broker with `keys`' policy, the service `svc` registered with the key `owner`, and an `ops`
    /// client subscribed to serviceDidStop.
    static func ownedService(_ keys: SecuritySetup) async throws -> (
        BrokerProcess, ChildProcess, BlockingClient, BusSubscriber
    ) {
        let broker = try await BrokerProcess(keys.brokerArguments)
        let service = try await broker.service(
            "lifeline-probe", ["--name", "svc"] + keys.keyArguments("owner"))
        let ops = try blockingClient(broker: broker.control, credentials: keys.credentials("ops"))
        return (broker, service, ops, try ops.subscribe(to: ["serviceDidStop"]))
    }

    @Test("a name belongs to the key that registered it: another key can neither unregister nor take it over")
    func namesBelongToKeys() async throws {
        let keys = try SecuritySetup(keys: ["ops", "owner", "mallory", "nobody"])
        defer { keys.remove() }
        try keys.writePolicy([
            "ops": Self.admin, "owner": Self.owner, "nobody": [:],
            "mallory": ["register": ["svc*"], "subscribe": ["*"], "call": ["*"]],
        ])
        let (broker, service, ops, stops) = try await Self.ownedService(keys)
        defer {
            service.kill()
            broker.process.kill()
        }
        let record = try ops.lookup("svc")

        for name in ["nobody", "mallory"] {
            let hostile = try RawClient(keys, name, broker: broker)
            let unregister = try #require(
                try hostile.ask(
                    "UNREGISTER", #"{"name": "svc", "instance": "\#(record.registration.instance)"}"#))
            #expect(Self.text(unregister[3]) == "403")
            #expect(
                Self.text(unregister[4]).contains(
                    "service 'svc' belongs to key 'owner': a name belongs to the key that registered it, and key '\(name)' may not unregister it"
                ), "\(Self.text(unregister[4]))")
        }
        let mallory = try RawClient(keys, "mallory", broker: broker)
        let takeover = try #require(
            try mallory.ask(
                "REGISTER",
                #"{"name": "svc", "instance": "\#(record.registration.instance)", "pid": \#(record.registration.pid), "host": "\#(record.registration.host)", "attach": "\#(record.registration.instance)"}"#
            ))
        #expect(Self.text(takeover[3]) == "403")
        #expect(Self.text(takeover[4]).contains("belongs to key 'owner'"), "\(Self.text(takeover[4]))")
        #expect(Self.text(takeover[4]).contains("key 'mallory' may not register, replace or heartbeat it"))

        let answer = try ops.call(ServiceCall(service: "svc", method: "whoami")).json()
        #expect(answer["pid"]?.intValue == Int64(service.pid), "calls still reach the owner")
        #expect(try ops.lookup("svc").registration.instance == record.registration.instance)
        #expect(try stops.next(timeout: .milliseconds(300)) == nil, "no serviceDidStop was published")
        try await broker.process.waitForLine(.stderr) {
            $0.contains("denied UNREGISTER") && $0.contains("key 'nobody' may not unregister it")
        }
    }

    @Test(
        "20 revocations in a row, by removal or by a key replaced in place: DISCONNECT with the reason first, then the connection closes"
    )
    func revocationsDisconnectFirst() async throws {
        let keys = try SecuritySetup(keys: ["ops", "victim", "spare"])
        defer { keys.remove() }
        let victim: JSONValue = ["subscribe": ["*"]]
        try keys.writePolicy(["ops": Self.admin, "victim": victim])
        let broker = try await BrokerProcess(keys.brokerArguments)
        defer { broker.process.kill() }
        var disconnected = 0
        for round in 1...20 {
            try await keys.reload(["ops": Self.admin, "victim": victim], broker)
            let client = try RawClient(keys, "victim", broker: broker)
            let hello = try #require(try client.ask("HELLO"), "round \(round): the victim is let in")
            #expect(Self.text(hello[3]) == "200")
            if round.isMultiple(of: 2) {
                // The entry stays, under another key: the open connection's key is gone all the same.
                let rotated: JSONValue = ["subscribe": ["*"], "publicKeyFile": "spare.pub"]
                try await keys.reload(["ops": Self.admin, "victim": rotated], broker)
            } else {
                try await keys.reload(["ops": Self.admin], broker)
            }
            let message = try client.next(milliseconds: 2000)
            if let message, message.count >= 4, Self.text(message[1]) == "DISCONNECT" {
                disconnected += 1
                #expect(
                    Self.text(message[3]).contains(
                        "revoked: your key ('victim') is no longer in the broker's policy"))
            }
            // Until its connection is shut (a moment after the DISCONNECT) a request is refused; then
            // nothing answers: a new handshake with the key is refused.
            var answers: [String] = []
            let deadline = ContinuousClock.now + .seconds(2)
            while let answer = try client.ask("HELLO", milliseconds: 300), ContinuousClock.now < deadline {
                answers.append(Self.text(answer[3]))
            }
            #expect(ContinuousClock.now < deadline, "round \(round): the connection is closed")
            #expect(answers.allSatisfy { $0 == "403" }, "round \(round): \(answers)")
        }
        #expect(disconnected == 20, "every revoked peer was told why before it was cut off")
    }

    @Test("a key replaced in place loses its services at once: serviceDidStop reason revoked")
    func rotationDropsServices() async throws {
        let keys = try SecuritySetup(keys: ["ops", "owner", "spare"])
        defer { keys.remove() }
        try keys.writePolicy(["ops": Self.admin, "owner": Self.owner])
        let (broker, service, ops, stops) = try await Self.ownedService(keys)
        defer {
            service.kill()
            broker.process.kill()
        }
        let rotated: JSONValue = [
            "register": ["svc*"], "subscribe": ["*"], "call": ["*"], "publicKeyFile": "spare.pub",
        ]
        try await keys.reload(["ops": Self.admin, "owner": rotated], broker)
        let stop = try #require(try stops.next(timeout: .seconds(2)))
        let payload = try JSONParser.parse(stop.payload)
        #expect(payload["name"] == "svc" && payload["reason"] == "revoked")
        #expect(try ops.services().isEmpty)
        try await broker.process.waitForLine(.stderr) {
            $0.contains("reloaded") && $0.contains("removed owner")
        }
        try await broker.process.waitForLine(.stderr) {
            $0.contains("refused a CURVE handshake") && $0.contains("is not on the allow-list")
        }
        #expect(try ops.services().isEmpty, "the old key cannot register again")
    }

    @Test("a micro-app host without admin changes only its own sessions: host B is refused on host A's")
    func hostsChangeOnlyTheirSessions() async throws {
        let keys = try SecuritySetup(keys: ["ops", "hostA", "hostB"])
        defer { keys.remove() }
        try keys.writePolicy([
            "ops": Self.admin, "hostA": ["register": ["hostA"]], "hostB": ["register": ["hostB"]],
        ])
        let broker = try await BrokerProcess(keys.brokerArguments)
        defer { broker.process.kill() }
        let hostA = try await broker.service(
            "lifeline-probe", ["--name", "hostA", "--apps", "a"] + keys.keyArguments("hostA"))
        defer { hostA.kill() }
        let hostB = try await broker.service(
            "lifeline-probe", ["--name", "hostB", "--apps", "b"] + keys.keyArguments("hostB"))
        defer { hostB.kill() }
        let ops = try blockingClient(broker: broker.control, credentials: keys.credentials("ops"))
        let started = try ops.apps(.start(AppStart(app: "a")))
        let sessionA = try #require(started["session"]?["id"]?.stringValue)

        let b = try blockingClient(broker: broker.control, credentials: keys.credentials("hostB"))
        let refused: [(AppsRequest, String)] = [
            (
                .exit(AppExit(target: .session(sessionA), force: true)),
                "session \(sessionA) (a) is hosted by hostA"
            ),
            (
                .action(target: .session(sessionA), action: "x", body: .null),
                "session \(sessionA) (a) is hosted by hostA"
            ),
            (.exitAll, "exitAll exits every session"),
            (.start(AppStart(app: "a")), "it does not host the app 'a'"),
            (.start(AppStart(app: "b", replacesRoot: true)), "setRoot exits every session"),
        ]
        for (operation, reason) in refused {
            let reply = try b.send(.apps(operation, operationID: nil))
            #expect(reply.status == .forbidden, "\(operation.operation)")
            #expect(
                reply.errorMessage.contains(
                    "key 'hostB' may not change the micro-app stack (APPS \(operation.operation)): a micro-app host without 'admin' may change only its own sessions (hosted by hostB), and \(reason)"
                ), "\(reply.errorMessage)")
        }
        let own = try b.apps(.start(AppStart(app: "b")))
        let sessionB = try #require(own["session"]?["id"]?.stringValue)
        _ = try b.apps(.exit(AppExit(target: .session(sessionB))))
        let a = try blockingClient(broker: broker.control, credentials: keys.credentials("hostA"))
        _ = try a.apps(.exit(AppExit(target: .session(sessionA))))
        #expect(try ops.apps(.list)["stack"]?.arrayValue?.isEmpty == true)
        // An id made as if in a callback counts only while that callback of its own host runs.
        let forged = try b.send(.apps(.exitAll, operationID: "0123456789abcdef.1"))
        #expect(forged.status == .forbidden)
    }

    @Test(
        "STATS and TRACE need 'observe' (or admin), and a non-admin's STATS holds only what its key may see")
    func observationIsARight() async throws {
        let keys = try SecuritySetup(keys: ["ops", "watcher", "nobody", "poster"])
        defer { keys.remove() }
        try keys.writePolicy([
            "ops": Self.admin, "nobody": ["subscribe": ["*"]], "poster": ["publish": ["com.example.*"]],
            "watcher": ["observe": true, "subscribe": ["com.example.public.*"], "call": ["svc.echo"]],
        ])
        let broker = try await BrokerProcess(keys.brokerArguments)
        defer { broker.process.kill() }
        let service = try await broker.service(
            "lifeline-probe", ["--name", "svc"] + keys.keyArguments("ops"))
        defer { service.kill() }
        let ops = try blockingClient(broker: broker.control, credentials: keys.credentials("ops"))
        _ = try ops.publish("com.example.secret.plans")
        _ = try ops.publish("com.example.public.news")
        _ = try ops.call(ServiceCall(service: "svc", method: "echo", body: Array(#"{"x": 1}"#.utf8)))
        _ = try ops.call(ServiceCall(service: "svc", method: "whoami"))

        let nobody = try blockingClient(broker: broker.control, credentials: keys.credentials("nobody"))
        let stats = try nobody.send(.stats)
        #expect(stats.status == .forbidden)
        #expect(
            stats.errorMessage
                == "key 'nobody' may not read the broker's statistics (STATS): its rules 'observe' and 'admin' are false"
        )
        let list = try nobody.send(.list)
        #expect(list.status == .forbidden)
        #expect(list.errorMessage.contains("may not list every service (LIST)"))
        #expect(
            try nobody.lookup("svc").registration.name == "svc",
            "LOOKUP stays open: callers find what they call")
        let trace = try nobody.send(.trace(seconds: 5))
        #expect(trace.status == .forbidden)
        #expect(trace.errorMessage.contains("may not trace dispatches and calls (TRACE)"))

        let watcher = try blockingClient(broker: broker.control, credentials: keys.credentials("watcher"))
        let seen = try watcher.request(.stats).json()
        #expect(seen["events"]?.objectValue?.keys.sorted() == ["com.example.public.news"])
        #expect(seen["services"]?["svc"]?["methods"]?.objectValue?.keys.sorted() == ["echo"])
        #expect(try watcher.send(.trace(seconds: 5)).status == .ok)
        #expect(try watcher.services().map(\.name) == ["svc"])
        let all = try ops.request(.stats).json()
        #expect(all["events"]?["com.example.secret.plans"] == 1, "an admin sees everything")
        #expect(all["services"]?["svc"]?["methods"]?["whoami"] != nil)
        let cli = try await CLIResult.run(
            ["stats", "--broker", broker.control] + keys.keyArguments("nobody"))
        #expect(cli.status == 1 && cli.errors.contains("its rules 'observe' and 'admin' are false"))
        // The CLI checks a custom event's required fields when it may list the services, and
        // publishes without that check when it may not.
        let posted = try await CLIResult.run(
            ["publish", "com.example.public.news", "--broker", broker.control] + keys.keyArguments("poster"))
        #expect(posted.status == 0, "\(posted.errors)")
    }

    @Test(
        "after a reload narrows a key's 'subscribe' rule, its open subscriptions stop delivering what it may not read"
    )
    func narrowedSubscriptions() async throws {
        let keys = try SecuritySetup(keys: ["ops", "reader"])
        defer { keys.remove() }
        try keys.writePolicy([
            "ops": Self.admin, "reader": ["subscribe": ["com.example.*"], "register": ["svc"]],
        ])
        let broker = try await BrokerProcess(keys.brokerArguments)
        defer { broker.process.kill() }
        let service = try await broker.service(
            "lifeline-probe", ["--name", "svc", "--events", "com.example.a"] + keys.keyArguments("reader"))
        defer { service.kill() }
        let reader = try blockingClient(broker: broker.control, credentials: keys.credentials("reader"))
        let subscriber = try reader.subscribe(to: ["com.example.a", "com.example.b"])
        let ops = try blockingClient(broker: broker.control, credentials: keys.credentials("ops"))
        _ = try ops.publish("com.example.a")
        #expect(try subscriber.next(timeout: .seconds(5))?.name == "com.example.a")

        let stops = try ops.subscribe(to: ["serviceDidStop"])
        try await keys.reload(
            ["ops": Self.admin, "reader": ["subscribe": ["com.example.b"], "register": ["svc"]]], broker)
        // A service registered for an event its key may no longer read does not stay registered.
        let stop = try #require(try stops.next(timeout: .seconds(2)))
        #expect(try JSONParser.parse(stop.payload)["reason"] == "revoked")
        let status = try await service.waitForExit(seconds: 10)
        #expect(status != 0, "registering again is refused, and the service stops")
        try await broker.process.waitForLine(.stderr) {
            $0.contains("bus connection(s) closed to subscribe again under a changed 'subscribe' rule")
        }
        // The reader's SUB reconnects by itself and subscribes again: 'b' comes back, 'a' does not.
        var received: [String] = []
        let deadline = ContinuousClock.now + .seconds(10)
        while !received.contains("com.example.b") && ContinuousClock.now < deadline {
            _ = try ops.publish("com.example.a")
            _ = try ops.publish("com.example.b")
            while let event = try subscriber.next(timeout: .milliseconds(100)) {
                received.append(event.name.rawValue)
            }
        }
        #expect(received.contains("com.example.b"), "the allowed event flows again")
        #expect(!received.contains("com.example.a"), "the event it may no longer read does not: \(received)")
        try await broker.process.waitForLine(.stderr) {
            $0.contains("refused a bus subscription: key 'reader' may not subscribe to 'com.example.a'")
        }
    }

    /// The resident set of process `pid`, in KiB.
    static func residentKiB(_ pid: Int32) throws -> Int {
        let status = try String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8)
        let line = try #require(status.split(separator: "\n").first { $0.hasPrefix("VmRSS:") })
        return try #require(Int(line.split(separator: " ", omittingEmptySubsequences: true)[1]))
    }

    @Test("100 refused 64 KiB subscriptions from one bus peer grow the broker by less than 10 MiB")
    func refusedSubscriptionsAreBounded() async throws {
        let keys = try SecuritySetup(keys: ["ops", "reader"])
        defer { keys.remove() }
        try keys.writePolicy(["ops": Self.admin, "reader": ["subscribe": ["*"]]])
        let broker = try await BrokerProcess(keys.brokerArguments)
        defer { broker.process.kill() }
        let ops = try blockingClient(broker: broker.control, credentials: keys.credentials("ops"))
        _ = try ops.subscribe(to: ["x.y"])
        let before = try Self.residentKiB(broker.process.pid)
        let credentials = try keys.credentials("reader")
        do {
            let peer = try ZMQSocket(ZMQContext.shared, type: .sub)
            defer { peer.close() }
            try peer.set(.linger, 0)
            try peer.secureAsClient(credentials.keys, serverKey: credentials.brokerKey)
            // The broker cuts the peer off for its oversized subscriptions; the peer reconnects and
            // sends all 100 again. The resident set is read at each of those steps, and once the
            // broker has answered a request sent after the second round (it has read its input).
            let events = "inproc://refused-subscriptions-\(UUID().uuidString)"
            try peer.monitor(events, events: ZMQSocket.disconnectedEvent | ZMQSocket.handshakeSucceededEvent)
            let monitor = try ZMQSocket(ZMQContext.shared, type: .pair)
            defer { monitor.close() }
            try monitor.set(.linger, 0)
            try monitor.set(.receiveTimeout, 10_000)
            try monitor.connect(events)
            try peer.connect(broker.bus)
            for index in 0..<100 {
                try peer.set(.subscribe, [UInt8](repeating: UInt8(65 + index % 26), count: 65_536 - index))
            }
            var largest = before
            var seen: [Int32] = []
            while seen != [
                ZMQSocket.handshakeSucceededEvent, ZMQSocket.disconnectedEvent,
                ZMQSocket.handshakeSucceededEvent,
            ] {
                let frames = try #require(
                    try monitor.receiveFrames(), "the peer is cut off and reconnects: \(seen)")
                seen.append(ZMQSocket.monitorEvent(frames[0]))
                largest = max(largest, try Self.residentKiB(broker.process.pid))
            }
            _ = try ops.hello()
            largest = max(largest, try Self.residentKiB(broker.process.pid))
            print(
                "broker resident set: \(before) KiB before, at most \(largest) KiB over two rounds of refused subscriptions"
            )
            #expect(largest - before < 10 * 1024)
        }
        let after = try Self.residentKiB(broker.process.pid)
        print("broker resident set after the peer left: \(after) KiB")
        #expect(after - before < 10 * 1024)
        #expect(try ops.hello().epoch > 0, "and the broker still serves")
    }
}
