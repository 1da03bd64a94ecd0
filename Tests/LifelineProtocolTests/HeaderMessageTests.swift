import Testing

@testable import LifelineProtocol

/// The messages declared once (``HeaderMessage``): the one declaration writes every field it reads,
/// in sorted order, and reads back what it wrote.
@Suite("Header messages: one declaration reads and writes", .timeLimit(.minutes(1)))
struct HeaderMessageTests {
    /// The keys of a JSON object, in the order they are written.
    static func keys(of header: [UInt8]) throws -> [String] {
        let tape = try JSONTape(header)
        var keys: [String] = []
        var child = 1
        while child < tape[0].next {
            keys.append(tape.string(at: child))
            child = tape[tape[child].next].next
        }
        return keys
    }

    /// Writes `message`, checks its keys are sorted and are `expected`, and reads it back.
    static func check<Message: HeaderMessage & Equatable>(_ message: Message, keys expected: [String]) throws
    {
        let header = message.header
        let keys = try keys(of: header)
        #expect(keys == keys.sorted(), "\(Message.command) writes \(keys)")
        #expect(keys == expected, "\(Message.command) writes \(keys)")
        let fields = HeaderFields(try JSONParser.parse(header), what: Message.command.rawValue)
        #expect(try Message(fields) == message)
    }

    @Test("every field set: each is written, in sorted order, and read back")
    func everyField() throws {
        try Self.check(
            ServiceCall(service: "cart", method: "add", key: "ana", timeoutMilliseconds: 900),
            keys: ["key", "method", "service", "timeoutMs"])
        try Self.check(
            Acknowledgement(sequence: 5, epoch: UInt64.max - 3, service: "push", error: "disk full"),
            keys: ["epoch", "error", "name", "sequence"])
        try Self.check(
            ReplayRequest(after: 3, epoch: UInt64.max, events: [.openURL, "com.example.a"]),
            keys: ["after", "epoch", "events"])
        try Self.check(UnregisterRequest(name: "push", instance: "i1"), keys: ["instance", "name"])
        try Self.check(
            DispatchRequest(event: .openURL, stepTimeoutMilliseconds: 300, force: true),
            keys: ["event", "force", "timeoutMs"])
        try Self.check(
            DispatchOffer(
                event: .performFetch, dispatch: 7, step: 2, timeoutMilliseconds: 30_000, mode: .concurrent,
                completion: .fetchResult, payload: .emptyObject),
            keys: ["completion", "dispatch", "event", "mode", "step", "timeoutMs"])
        try Self.check(
            AppCallbackRequest(
                session: "s1", app: "home", callback: .willPause, callbackID: "c9", timeoutMilliseconds: 2000),
            keys: ["app", "callback", "callbackId", "session", "timeoutMs"])
        try Self.check(
            BootTaskRun(
                task: "push.start", kind: .start, condition: .launchOption("url"), launchOptions: ["a": 1],
                timeoutMilliseconds: 10_000),
            keys: ["condition", "kind", "launchOptions", "op", "task", "timeoutMs"])
        try Self.check(StartHeader(name: "push", timeoutMilliseconds: 10_000), keys: ["name", "timeoutMs"])
        var apps = AppsHeader()
        (apps.action, apps.all, apps.animated, apps.app, apps.body) = ("save", true, false, "home", [1])
        (apps.clearTop, apps.force, apps.mode, apps.op, apps.opId) = (
            true, true, "pushNoAnimation", "start", "o1"
        )
        (apps.params, apps.parent, apps.result, apps.session) = (["a": 1], "s1", ["ok": true], "s2")
        try Self.check(
            apps,
            keys: [
                "action", "all", "animated", "app", "body", "clearTop", "force", "mode", "op", "opId",
                "params",
                "parent", "result", "session",
            ])
        try Self.check(
            InterceptHeader(
                AppStart(
                    app: "home", params: ["a": 1], mode: .presentNoAnimation, clearTop: true, parent: "s1"),
                timeoutMilliseconds: 2000),
            keys: ["app", "clearTop", "mode", "params", "parent", "timeoutMs"])
        try Self.check(
            BootHeader(launchOptions: ["url": "x"], op: "start", task: "t"),
            keys: ["launchOptions", "op", "task"])
    }

    @Test("fields at their defaults are not written; required ones are")
    func defaultsOmitted() throws {
        try Self.check(ServiceCall(service: "cart", method: "add"), keys: ["method", "service"])
        try Self.check(Acknowledgement(sequence: 1, epoch: nil, service: "push"), keys: ["name", "sequence"])
        try Self.check(UnregisterRequest(name: "push", instance: nil), keys: ["name"])
        try Self.check(DispatchRequest(event: .openURL), keys: ["event"])
    }

    @Test("a field of the wrong kind names the command, the field and what it must be")
    func refusals() {
        func reading<Message: HeaderMessage>(_ type: Message.Type, _ header: JSONValue) -> String? {
            do {
                _ = try Message(HeaderFields(header, what: Message.command.rawValue))
                return nil
            } catch { return error.message }
        }
        #expect(
            reading(ServiceCall.self, ["service": "a", "method": "m", "key": ""])?.hasPrefix("CALL 'key': ")
                == true)
        #expect(
            reading(DispatchOffer.self, ["event": "x", "mode": "fast"])
                == "OFFER mode must be chain, notify or concurrent, not 'fast'")
        #expect(
            reading(Acknowledgement.self, ["name": "a", "sequence": -1])
                == "ACK 'sequence' must be a non-negative integer, not -1")
        #expect(reading(Acknowledgement.self, ["name": "a", "sequence": 1, "epoch": -1]) == nil)
        #expect(reading(ReplayRequest.self, ["after": 0, "epoch": -1, "events": []]) == nil)
        #expect(
            reading(ReplayRequest.self, ["after": 0, "epoch": 1.8446744073709552e19, "events": []])
                == "REPLAY 'epoch' must be an integer within -2^63...2^63-1, not number")
        #expect(reading(UnregisterRequest.self, [:]) == "UNREGISTER needs a string 'name'")
    }

    @Test("tolerant fields take a value of another kind as absent; the others refuse it")
    func tolerance() throws {
        func read<Message: HeaderMessage>(_ type: Message.Type, _ header: JSONValue) throws -> Message {
            try Message(HeaderFields(header, what: Message.command.rawValue))
        }
        let beat = try read(
            HeartbeatHeader.self, ["dropped": -4, "queued": "many", "handled": 3, "name": "svc"])
        #expect(beat.dropped == 0 && beat.queued == nil && beat.handled == nil && beat.name == "svc")
        let ack = try read(Acknowledgement.self, ["name": "a", "sequence": 2, "epoch": "x", "error": 5])
        #expect(ack == Acknowledgement(sequence: 2, epoch: nil, service: "a"))
        let list = try read(AppsHeader.self, ["op": "list", "force": "yes", "parent": 3, "all": "true"])
        #expect(!list.force && list.parent == nil && !list.all)
        let offer = try read(DispatchOffer.self, ["event": "x", "completion": "someNewRule"])
        #expect(offer.completion == nil, "a completion rule a newer broker sends is read as none")
        #expect(throws: ProtocolError.self) { try read(AppsHeader.self, ["op": 5]) }
    }

    @Test("INTERCEPT writes all five fields, clearTop false and parent null too")
    func interceptWritesEveryField() throws {
        let header = InterceptHeader(AppStart(app: "home")).header
        #expect(try Self.keys(of: header) == ["app", "clearTop", "mode", "params", "parent"])
        #expect(
            try JSONParser.parse(header)["parent"] == .null && JSONParser.parse(header)["clearTop"] == false)
    }
}
