import LifelineProtocol
import Testing

@testable import LifelineBroker

extension BrokerHarness {
    /// Registers a host `name` offering `apps`.
    @discardableResult
    mutating func host(_ name: String, apps: [String], interceptor: Int? = nil, lazy: Bool = false)
        -> ControlReply?
    {
        var json = Self.registration(name, instance: name, events: [], methods: ["m"]).objectValue!
        json["apps"] = .array(apps.map { .string($0) })
        if let interceptor { json["interceptor"] = ["priority": .int(Int64(interceptor))] }
        json["lazy"] = .bool(lazy)
        subscribeMarker(name)
        return request(name, .register, .object(json))
    }

    /// The APP callback sent in the last step, as `app.callback`, and its request.
    var appCallback: (String, ControlRequest)? {
        for item in output {
            guard case .send(_, let frames) = item,
                case .request(let request)? = try? ControlMessage.decode(frames[...]), request.command == .app
            else { continue }
            return (
                "\(request.header["app"]?.stringValue ?? "").\(request.header["callback"]?.stringValue ?? "")",
                request
            )
        }
        return nil
    }

    /// Answers every APP callback in turn from `peer(host)`, collecting the order, until none is pending.
    mutating func answerCallbacks(_ bodies: [String: JSONValue] = [:]) -> [String] {
        answerCallbacksWithPeers(bodies).map(\.callback)
    }

    /// ``answerCallbacks(_:)``, with the peer each callback went to.
    mutating func answerCallbacksWithPeers(_ bodies: [String: JSONValue] = [:]) -> [(
        callback: String, peer: String
    )] {
        var order: [(callback: String, peer: String)] = []
        while let (label, request) = appCallback {
            let host = output.compactMap { item -> String? in
                if case .send(let peer, let frames) = item,
                    (try? ControlMessage.decode(frames[...])) == .request(request)
                {
                    return String(decoding: peer, as: UTF8.self)
                }
                return nil
            }.first!
            order.append((label, host))
            #expect(
                (request.header["timeoutMs"]?.intValue ?? 0) > 0,
                "an APP says how long the broker waits for it: \(request.header)")
            raw(host, ControlReply(requestID: request.requestID, json: bodies[label] ?? [:]).frames())
        }
        return order
    }

    mutating func apps(_ header: JSONValue) -> ControlReply? { request("cli", .apps, header) }
}

@Suite("The Context's micro-app stack across hosts", .timeLimit(.minutes(1)))
struct AppsTests {
    @Test(
        "a start runs its callbacks host by host, each after the previous answered, and reports the session")
    func startAcrossHosts() throws {
        var broker = BrokerHarness()
        broker.host("shell", apps: ["launcher"])
        broker.host("account", apps: ["login"])
        _ = broker.apps(["op": "start", "app": "launcher"])
        #expect(
            broker.answerCallbacks(["launcher.didCreate": ["root": ["screen": "tabs"]]]) == [
                "launcher.didCreate", "launcher.willStartLaunching", "launcher.didFinishLaunching",
            ])
        let started = try #require(broker.replies(to: "cli").first)
        #expect(try started.json()["session"]?["root"] == ["screen": "tabs"])
        _ = broker.apps([
            "op": "start", "app": "login", "params": ["user": "ana"], "mode": "presentNoAnimation",
            "parent": "s1",
        ])
        let first = try #require(broker.appCallback)
        #expect(first.0 == "login.didCreate", "one callback at a time")
        #expect(
            broker.answerCallbacks() == [
                "login.didCreate", "launcher.willPause", "login.willStartLaunching",
                "login.didFinishLaunching",
            ])
        let step101 = broker.apps(["op": "list"])
        let list = try #require(step101).json()
        #expect(list["stack"]?.arrayValue?.map { $0["app"] } == ["launcher", "login"])
        #expect(list["stack"]?.arrayValue?.map { $0["state"] } == ["paused", "running"])
        #expect(broker.published.isEmpty || true)
    }

    @Test("a change naming a session that is not there says which one, and what is on the stack")
    func missingSessions() throws {
        var broker = BrokerHarness()
        broker.host("shell", apps: ["launcher"])
        _ = broker.apps(["op": "start", "app": "launcher"])
        _ = broker.answerCallbacks()
        let action = broker.apps(["op": "action", "app": "wallet", "action": "pay"])
        #expect(action?.status == .notFound)
        #expect(action?.errorMessage == "no session of the app 'wallet' on the stack; on it: s1 (launcher)")
        let exit = broker.apps(["op": "exit", "session": "s9"])
        #expect(exit?.errorMessage == "no session 's9' on the stack; on it: s1 (launcher)")
    }

    @Test("an app no live host offers is refused with the offered apps; bad modes and parents too")
    func refusals() throws {
        var broker = BrokerHarness()
        broker.host("shell", apps: ["launcher", "home"])
        let step102 = broker.apps(["op": "start", "app": "wallet"])
        let missing = try #require(step102)
        #expect(
            missing.status == .notFound
                && missing.errorMessage
                    == "no live host offers the app 'wallet'; offered apps: home, launcher"
        )
        let step103 = broker.apps(["op": "start", "app": "home", "mode": "sideways"])
        #expect(step103?.status == .badRequest)
        let step104 = broker.apps(["op": "start", "app": "home", "parent": "s99"])
        #expect(step104?.status == .notFound)
        let step105 = broker.apps(["op": "current"])
        #expect(step105?.body == JSONWriter.encode(["session": nil]))
    }

    @Test("interceptors see starts first: they may change them or refuse them")
    func interceptors() throws {
        var broker = BrokerHarness()
        broker.host("shell", apps: ["home", "login"])
        broker.host("gate", apps: [], interceptor: 5)
        _ = broker.apps(["op": "start", "app": "home"])
        let intercept = try #require(broker.requests(to: "gate").first)
        #expect(intercept.command == .intercept && intercept.header["app"] == "home")
        broker.raw(
            "gate",
            ControlReply(
                requestID: intercept.requestID,
                json: ["action": "change", "app": "login", "params": ["next": "home"]]
            ).frames())
        let order = broker.answerCallbacks()
        #expect(order.first == "login.didCreate")
        _ = broker.apps(["op": "start", "app": "home"])
        let second = try #require(broker.requests(to: "gate").first)
        broker.raw(
            "gate",
            ControlReply(requestID: second.requestID, json: ["action": "refuse", "reason": "not signed in"])
                .frames())
        let refused = try #require(broker.replies(to: "cli").first)
        #expect(
            refused.status == .forbidden
                && refused.errorMessage == "the start of 'home' was refused by gate: not signed in")
    }

    @Test("exit: only the top exits normally, shouldTerminate may veto, force skips both")
    func exitRules() throws {
        var broker = BrokerHarness()
        broker.host("shell", apps: ["a", "b"])
        for app in ["a", "b"] {
            _ = broker.apps(["op": "start", "app": .string(app)])
            _ = broker.answerCallbacks()
        }
        let step106 = broker.apps(["op": "exit", "session": "s1"])
        #expect(step106?.status == .conflict)
        _ = broker.apps(["op": "exit", "app": "b"])
        #expect(broker.appCallback?.0 == "b.shouldTerminate")
        #expect(broker.answerCallbacks(["b.shouldTerminate": ["allow": false]]) == ["b.shouldTerminate"])
        let vetoed = try #require(broker.replies(to: "cli").first)
        #expect(
            vetoed.status == .conflict
                && vetoed.errorMessage == "s2 (b) refused to terminate: its shouldTerminate answered NO")
        _ = broker.apps(["op": "exit", "app": "b", "result": ["done": true]])
        #expect(
            broker.answerCallbacks(["b.shouldTerminate": ["allow": true]]) == [
                "b.shouldTerminate", "b.willTerminate", "a.willResume", "a.didResume",
            ])
        _ = broker.apps(["op": "start", "app": "b"])
        _ = broker.answerCallbacks()
        _ = broker.apps(["op": "exit", "session": "s1", "force": true])
        #expect(broker.answerCallbacks() == ["a.willTerminate"])
    }

    /// A host `shell` with sessions a and b started, and b asked to exit: its shouldTerminate waits.
    static func exitAsked() -> BrokerHarness {
        var broker = BrokerHarness()
        broker.host("shell", apps: ["a", "b"])
        for app in ["a", "b"] {
            _ = broker.apps(["op": "start", "app": .string(app)])
            _ = broker.answerCallbacks()
        }
        _ = broker.apps(["op": "exit", "app": "b"])
        #expect(broker.appCallback?.0 == "b.shouldTerminate")
        return broker
    }

    @Test(
        "a host that stops cleanly while its shouldTerminate waits keeps the session, detached: the exit is answered 503"
    )
    func cleanStopDuringVeto() throws {
        var broker = Self.exitAsked()
        _ = broker.request("shell", .unregister, ["name": "shell", "instance": "shell"])
        let reply = try #require(broker.replies(to: "cli").first)
        #expect(reply.status == .unavailable)
        #expect(
            reply.errorMessage
                == "s2 was not exited: shell stopped before answering shouldTerminate; the session waits for it, detached"
        )
        let listed = broker.apps(["op": "list"])
        let stack = try #require(listed).json()["stack"]?.arrayValue ?? []
        #expect(stack.map { $0["state"]?.stringValue } == ["detached", "detached"])
    }

    @Test("a start whose host dies on the way is answered 503, not 200 with a session that crashed")
    func startWhoseHostDies() throws {
        var broker = BrokerHarness()
        broker.host("shell", apps: ["a"])
        _ = broker.apps(["op": "start", "app": "a"])
        #expect(broker.appCallback?.0 == "a.didCreate")
        var reply: ControlReply?
        for _ in 0..<100 where reply == nil {
            broker.advance(milliseconds: 100)
            reply = broker.replies(to: "cli").first
        }
        let answered = try #require(reply, "answered once the host expired")
        #expect(answered.status == .unavailable)
        #expect(
            answered.errorMessage
                == "the host of s1 (a), shell, went away during the start: the session crashed with it")
        let listed = broker.apps(["op": "list"])
        #expect(try #require(listed).json()["stack"] == [])
    }

    @Test("a start whose host stops cleanly on the way is answered 503: the session waits for it, detached")
    func startWhoseHostStops() throws {
        var broker = BrokerHarness()
        broker.host("shell", apps: ["a"])
        _ = broker.apps(["op": "start", "app": "a"])
        #expect(broker.appCallback?.0 == "a.didCreate")
        _ = broker.request("shell", .unregister, ["name": "shell", "instance": "shell"])
        var reply = broker.replies(to: "cli").first
        for _ in 0..<100 where reply == nil {
            broker.advance(milliseconds: 100)
            reply = broker.replies(to: "cli").first
        }
        let answered = try #require(reply)
        #expect(answered.status == .unavailable)
        #expect(
            answered.errorMessage
                == "the host of s1 (a), shell, stopped during the start: the session waits for it, detached")
        let listed = broker.apps(["op": "list"])
        let stack = try #require(listed).json()["stack"]?.arrayValue ?? []
        #expect(stack.map { $0["state"]?.stringValue } == ["detached"])
    }

    @Test("a shouldTerminate left unanswered past the callback time-out counts as allowed: the exit goes on")
    func unansweredVeto() throws {
        var broker = Self.exitAsked()
        broker.advance(milliseconds: 2001)
        #expect(broker.answerCallbacks() == ["b.willTerminate", "a.willResume", "a.didResume"])
        #expect(try #require(broker.replies(to: "cli").first).status == .ok)
        let listed = broker.apps(["op": "list"])
        let list = try #require(listed)
        #expect(try list.json()["stack"]?.arrayValue?.count == 1)
    }

    @Test("the session that resumes after an exit, a dismiss or a popToRoot is stamped with the wall time")
    func resumedSessionsCarryTheWallTime() throws {
        var broker = BrokerHarness()
        broker.host("shell", apps: ["a", "b", "c"])
        func start(_ app: String, mode: String = "pushWithAnimation") {
            _ = broker.apps(["op": "start", "app": .string(app), "mode": .string(mode)])
            _ = broker.answerCallbacks()
        }
        func updatedAt(_ id: String) throws -> Int64? {
            let step = broker.apps(["op": "list"])
            let stack = try #require(step).json()["stack"]?.arrayValue ?? []
            return stack.first { $0["id"]?.stringValue == id }?["updatedAt"]?.intValue
        }
        /// The injected clock's wall time in milliseconds (the harness starts its wall clock at 1.7e18 ns).
        func wallMilliseconds() -> Int64 {
            Int64((1_700_000_000_000_000_000 + broker.now - 1_000_000_000) / 1_000_000)
        }

        start("a")
        start("b")
        broker.advance(milliseconds: 1_500)
        _ = broker.apps(["op": "exit", "app": "b", "force": true])
        #expect(broker.answerCallbacks() == ["b.willTerminate", "a.willResume", "a.didResume"])
        #expect(try updatedAt("s1") == wallMilliseconds(), "after an exit")

        start("c", mode: "presentWithAnimation")
        broker.advance(milliseconds: 2_000)
        _ = broker.apps(["op": "dismiss"])
        #expect(broker.answerCallbacks().suffix(2) == ["a.willResume", "a.didResume"])
        #expect(try updatedAt("s1") == wallMilliseconds(), "after a dismiss")

        start("b")
        start("c")
        broker.advance(milliseconds: 3_000)
        _ = broker.apps(["op": "popToRoot"])
        #expect(broker.answerCallbacks().suffix(2) == ["a.willResume", "a.didResume"])
        #expect(try updatedAt("s1") == wallMilliseconds(), "after a popToRoot")
    }

    @Test("a dead host's sessions crash out of the stack; the one below resumes; persisted on every change")
    func crash() throws {
        var broker = BrokerHarness()
        broker.host("shell", apps: ["launcher"])
        broker.register(
            "account", peer: "account", instance: "account", events: [],
            heartbeat: HeartbeatSettings(intervalMilliseconds: 100, liveness: 2))
        var json = BrokerHarness.registration(
            "account", instance: "account", events: [],
            heartbeat: HeartbeatSettings(intervalMilliseconds: 100, liveness: 2)
        ).objectValue!
        json["apps"] = ["home"]
        broker.request("account", .register, .object(json))
        _ = broker.apps(["op": "start", "app": "launcher"])
        _ = broker.answerCallbacks()
        _ = broker.apps(["op": "start", "app": "home", "parent": "s1"])
        _ = broker.answerCallbacks()
        broker.advance(milliseconds: 150)
        broker.request("shell", .heartbeat)
        broker.advance(milliseconds: 60)
        #expect(broker.published.map(\.name).contains(.appDidCrash))
        #expect(broker.appCallback?.0 == "launcher.childDidFinish")
        #expect(
            broker.answerCallbacks() == [
                "launcher.childDidFinish", "launcher.willResume", "launcher.didResume",
            ])
        let saved = broker.output.compactMap { item -> JSONValue? in
            if case .persist(_, let document) = item { document } else { nil }
        }.last
        #expect(saved?["sessions"]?.arrayValue?.map { $0["app"] } == ["launcher"])
    }

    @Test("a change carrying an operation id is done once, also when it comes again after a broker restart")
    func operationsDoneOnce() throws {
        var broker = BrokerHarness()
        broker.host("shell", apps: ["launcher", "home"])
        _ = broker.apps(["op": "start", "app": "launcher", "opId": "op-1"])
        _ = broker.answerCallbacks()
        let saved = try #require(
            broker.output.compactMap { item -> JSONValue? in
                if case .persist("sessions.json", let document) = item { document } else { nil }
            }.last)
        #expect(saved["operations"] == ["op-1"], "the id is kept with the stack it changed")
        let again = broker.apps(["op": "start", "app": "launcher", "opId": "op-1"])
        #expect(try again?.json()["repeated"] == true)
        #expect(broker.appCallback == nil, "nothing is done twice")

        var restarted = BrokerHarness()
        restarted.core = Broker(
            configuration: BrokerConfiguration(),
            identity: BrokerIdentity(pid: 2, host: "test", version: "test"),
            busEndpoints: ["tcp://127.0.0.1:9"], monotonic: restarted.instant,
            wall: 1_800_000_000_000_000_000,
            sessions: saved)
        let afterRestart = restarted.apps(["op": "start", "app": "launcher", "opId": "op-1"])
        #expect(try afterRestart?.json()["repeated"] == true)
        #expect(try restarted.apps(["op": "list"])?.json()["stack"]?.arrayValue?.count == 1)
    }

    @Test(
        "a change is saved before its first callback; a restarted broker delivers what was not answered, same ids, when the host is back"
    )
    func changeSurvivesRestart() throws {
        var broker = BrokerHarness()
        broker.host("shell", apps: ["launcher", "home"])
        _ = broker.apps(["op": "start", "app": "launcher"])
        _ = broker.answerCallbacks()
        _ = broker.apps(["op": "start", "app": "home", "parent": "s1", "opId": "op-2"])
        let saved = { (broker: BrokerHarness) in
            broker.output.compactMap { item -> JSONValue? in
                if case .persist("sessions.json", let document) = item { document } else { nil }
            }.last
        }
        let first = try #require(saved(broker))
        #expect(first["operations"] == ["op-2"], "done from the moment it is saved")
        #expect(
            first["pending"]?.arrayValue?.map { $0["callback"] }
                == ["didCreate", "willPause", "willStartLaunching", "didFinishLaunching"])
        let created = try #require(broker.appCallback)
        #expect(created.1.header["callbackId"] == first["pending"]?.arrayValue?.first?["id"])
        broker.raw("shell", ControlReply(requestID: created.1.requestID, json: ["root": "home"]).frames())
        let paused = try #require(broker.appCallback)
        #expect(paused.0 == "launcher.willPause")
        let lastSaved = try #require(saved(broker))
        #expect(lastSaved["pending"]?.arrayValue?.count == 3, "the answered callback is not sent again")

        var restarted = BrokerHarness()
        restarted.core = Broker(
            configuration: BrokerConfiguration(),
            identity: BrokerIdentity(pid: 2, host: "test", version: "test"),
            busEndpoints: ["tcp://127.0.0.1:9"], monotonic: restarted.instant,
            wall: 1_800_000_000_000_000_000, sessions: lastSaved)
        #expect(restarted.core.startupNotes.contains { $0.contains("3 micro-app callback(s)") })
        let repeated = restarted.apps(["op": "start", "app": "home", "parent": "s1", "opId": "op-2"])
        #expect(try repeated?.json()["repeated"] == true)
        restarted.host("shell", apps: ["launcher", "home"])
        var order: [String] = []
        var pausedAgain: JSONValue?
        while let (label, request) = restarted.appCallback {
            order.append(label)
            if label == "launcher.willPause" { pausedAgain = request.header["callbackId"] }
            restarted.raw("shell", ControlReply(requestID: request.requestID, json: [:]).frames())
        }
        #expect(
            order == [
                "launcher.restore", "home.restore", "launcher.willPause", "home.willStartLaunching",
                "home.didFinishLaunching",
            ])
        #expect(pausedAgain == paused.1.header["callbackId"], "delivered again with its id")
        #expect(saved(restarted)?["pending"] == nil && saved(restarted)?["deferred"] == [])
    }

    @Test("callbacks for a session whose host stopped cleanly wait for it and follow its restore callbacks")
    func callbacksWaitForHost() throws {
        var broker = BrokerHarness()
        broker.host("shell", apps: ["launcher"])
        broker.host("account", apps: ["home"])
        _ = broker.apps(["op": "start", "app": "launcher"])
        _ = broker.answerCallbacks()
        _ = broker.apps(["op": "start", "app": "home", "parent": "s1"])
        _ = broker.answerCallbacks()
        _ = broker.request("shell", .unregister, ["name": "shell", "instance": "shell"])
        _ = broker.apps(["op": "exit", "session": "s2", "force": true, "result": ["ok": true]])
        #expect(broker.answerCallbacks() == ["home.willTerminate"], "the launcher's host is away")
        broker.host("shell", apps: ["launcher"])
        #expect(
            broker.answerCallbacks() == [
                "launcher.restore", "launcher.childDidFinish", "launcher.willResume", "launcher.didResume",
            ])
    }

    @Test(
        "a host that stops cleanly keeps its sessions, detached, without a crash; they come back when it returns"
    )
    func cleanStopKeepsSessions() throws {
        var broker = BrokerHarness()
        broker.host("shell", apps: ["launcher", "home"])
        _ = broker.apps(["op": "start", "app": "launcher"])
        _ = broker.answerCallbacks()
        _ = broker.apps(["op": "start", "app": "home", "parent": "s1"])
        _ = broker.answerCallbacks()
        let goodbye = broker.request("shell", .unregister, ["name": "shell", "instance": "shell"])
        #expect(goodbye?.status == .ok)
        #expect(!broker.published.map(\.name).contains(.appDidCrash), "a clean stop is not a crash")
        #expect(broker.published.map(\.name) == [.serviceDidStop])
        let saved = broker.output.compactMap { item -> JSONValue? in
            if case .persist("sessions.json", let document) = item { document } else { nil }
        }.last
        #expect(saved?["sessions"]?.arrayValue?.map { $0["app"] } == ["launcher", "home"])
        #expect(saved?["sessions"]?.arrayValue?.map { $0["state"] } == ["detached", "detached"])
        broker.host("shell", apps: ["launcher", "home"])
        #expect(broker.answerCallbacks() == ["launcher.restore", "home.restore"])
        let list = broker.apps(["op": "list"])
        #expect(try list?.json()["stack"]?.arrayValue?.map { $0["state"] } == ["paused", "running"])
    }

    @Test(
        "non-lazy services start with the boot, or at once after it; lazy ones on their first lookup, which waits for it"
    )
    func serviceStarts() throws {
        var broker = BrokerHarness()
        broker.register("eager", peer: "pe")
        #expect(broker.requests(to: "pe").isEmpty, "nothing starts before the boot")
        broker.request("cli", .boot, ["op": "start"])
        let run = try #require(broker.requests(to: "pe").first)
        #expect(run.command == .boot && run.header["task"] == "eager.start" && run.header["kind"] == "start")
        broker.raw("pe", ControlReply(requestID: run.requestID, json: ["outcome": "done"]).frames())
        #expect(broker.published.map(\.name).contains(.bootDidFinish))
        broker.register("late", peer: "pl")
        #expect(
            broker.requests(to: "pl").map(\.command) == [.start],
            "after the boot, services start as they register")
        broker.host("sleepy", apps: [], lazy: true)
        #expect(broker.requests(to: "sleepy").isEmpty)
        let step1 = broker.request("cli", .lookup, ["name": "sleepy"])
        #expect(step1 == nil, "the lookup waits for the start")
        let start = try #require(broker.requests(to: "sleepy").first)
        #expect(start.command == .start)
        broker.raw("sleepy", ControlReply(requestID: start.requestID, json: [:]).frames())
        let record = try #require(broker.replies(to: "cli").first).json()
        #expect(record["started"] == true && record["lazy"] == true)
    }

    @Test("the Launcher starts in the boot's last phase; a restored stack waits for its hosts and comes back")
    func launcherAndRestore() throws {
        var broker = BrokerHarness { $0.launcherApp = "launcher" }
        broker.host("shell", apps: ["launcher", "home"])
        #expect(broker.appCallback == nil, "not before the boot")
        broker.request("cli", .boot, ["op": "start"])
        let startTask = try #require(broker.requests(to: "shell").first { $0.command == .boot })
        broker.raw("shell", ControlReply(requestID: startTask.requestID, json: ["outcome": "done"]).frames())
        #expect(
            broker.answerCallbacks() == [
                "launcher.didCreate", "launcher.willStartLaunching", "launcher.didFinishLaunching",
            ])
        #expect(broker.published.map(\.name).contains(.bootDidFinish), "the Launcher's start ends the boot")
        _ = broker.apps(["op": "start", "app": "home"])
        _ = broker.answerCallbacks()
        let saved = broker.output.compactMap { item -> JSONValue? in
            if case .persist(_, let document) = item { document } else { nil }
        }.last!

        var restarted = BrokerHarness()
        restarted.core = Broker(
            configuration: {
                var c = BrokerConfiguration(); c.launcherApp = "launcher"; return c
            }(),
            identity: BrokerIdentity(pid: 2, host: "test", version: "test"),
            busEndpoints: ["tcp://127.0.0.1:9"],
            monotonic: restarted.instant, wall: 1_800_000_000_000_000_000, sessions: saved)
        #expect(restarted.core.startupNotes == ["restored 2 micro-app session(s); they wait for their hosts"])
        let step107 = restarted.apps(["op": "list"])
        #expect(try step107?.json()["stack"]?.arrayValue?.map { $0["state"] } == ["detached", "detached"])
        restarted.host("shell", apps: ["launcher", "home"])
        #expect(
            restarted.answerCallbacks() == ["launcher.restore", "home.restore"],
            "restored, and no second Launcher")
        let step108 = restarted.apps(["op": "list"])
        #expect(try step108?.json()["stack"]?.arrayValue?.map { $0["state"] } == ["paused", "running"])
    }
}
