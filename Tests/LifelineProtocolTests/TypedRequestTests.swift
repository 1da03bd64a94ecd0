import TestSupport
import Testing

@testable import LifelineProtocol

@Suite("Typed requests: one decode, one encode, errors that name the field", .timeLimit(.minutes(1)))
struct TypedRequestTests {
    static let clientRequests: [ClientRequest] = [
        .hello, .heartbeat(dropped: nil), .heartbeat(dropped: 12),
        .heartbeat(dropped: nil, handled: ["a.b": 3], name: "push", undecodable: 1, failed: 2), .list, .stats,
        .lookup(name: "push"),
        .attach(token: "t1"),
        .register(
            RegisterRequest(
                ServiceRegistration(
                    name: "push", instance: "i1", pid: 4, host: "h", events: [.openURL], methods: ["status"],
                    attachToken: "i1", priorities: [.openURL: 3], deadlines: [.openURL: 400], apps: ["home"],
                    lazy: true, interceptorPriority: 2),
                resume: EventCursor(epoch: 9, sequence: 41))),
        .unregister(UnregisterRequest(name: "push", instance: "i1")),
        .call(
            ServiceCall(service: "url", method: "resolve", timeoutMilliseconds: 900, body: Array("{}".utf8))),
        .publish(
            PublishRequest(
                event: "com.example.a", payload: Array("{\"n\":1}".utf8), acknowledged: true,
                timeoutMilliseconds: 50,
                force: true, reply: false)),
        .dispatch(
            DispatchRequest(
                event: .openURL, payload: ["url": "app://x"], stepTimeoutMilliseconds: 300, force: true)),
        .replay(ReplayRequest(after: 3, epoch: 9, events: [.openURL])),
        .acknowledge(Acknowledgement(sequence: 5, epoch: 9, service: "push", error: "disk full")),
        .apps(.list), .apps(.current), .apps(.find(app: "home", all: true)),
        .apps(
            .start(
                AppStart(
                    app: "home", params: ["a": 1], mode: .presentNoAnimation, clearTop: true, parent: "s1"))),
        .apps(.start(AppStart(app: "home", replacesRoot: true))),
        .apps(.exit(AppExit(target: .session("s3"), force: true, result: ["ok": true], animated: false))),
        .apps(.exitAll), .apps(.dismiss), .apps(.popToRoot),
        .apps(.action(target: .app("home"), action: "save", body: [1, 2])),
        .boot(.report), .boot(.start(launchOptions: ["url": "x"])), .boot(.run(task: "push.start")),
    ]

    @Test("every client request survives its encode and decode unchanged", arguments: clientRequests)
    func clientRoundTrip(_ request: ClientRequest) throws {
        let wire = request.controlRequest(id: Array("r7".utf8))
        guard case .request(let decoded) = try ControlMessage.decode(wire.frames()[...]) else {
            Issue.record("not a request")
            return
        }
        #expect(decoded.requestID == Array("r7".utf8))
        var typed = try ClientRequest.decode(decoded)
        if case .dispatch(var dispatch) = typed {
            dispatch.payloadBytes = JSONWriter.encode(dispatch.payload)
            typed = .dispatch(dispatch)
        }
        #expect(typed == request)
    }

    static let brokerRequests: [BrokerRequest] = [
        .heartbeat, .disconnect(reason: "broker shutting down"), .start(name: "push"),
        .call(
            ServiceCall(
                service: "url", method: "resolve", timeoutMilliseconds: 5000, body: Array("null".utf8))),
        .offer(
            DispatchOffer(
                event: .performFetch, dispatch: 7, step: 2, timeoutMilliseconds: 30_000, mode: .concurrent,
                completion: .fetchResult, payload: ["a": 1])),
        .event(
            BusMessage(
                name: .openURL,
                header: BusHeader(
                    epoch: 9, sequence: 4, topicSequence: 2, flags: 1, publishedWallNanoseconds: 11,
                    publishedMonotonicNanoseconds: 12), payload: Array("{\"url\":\"x\"}".utf8))),
        .app(
            AppCallbackRequest(session: "s1", app: "home", callback: .willResume, arguments: ["options": [:]])
        ),
        .intercept(
            AppStart(app: "home", params: ["x": 1], mode: .pushNoAnimation, clearTop: true, parent: "s2")),
        .boot(
            BootTaskRun(
                task: "push.warm", kind: .task, condition: .launchOption("url"), launchOptions: ["url": "y"])),
    ]

    @Test("every broker request survives its encode and decode unchanged", arguments: brokerRequests)
    func brokerRoundTrip(_ request: BrokerRequest) throws {
        let wire = request.controlRequest(id: Array("b1".utf8))
        guard case .request(let decoded) = try ControlMessage.decode(wire.frames()[...]) else {
            Issue.record("not a request")
            return
        }
        #expect(try BrokerRequest.decode(decoded) == request)
    }

    struct BadField: Sendable, CustomTestStringConvertible {
        let command: Command
        let header: JSONValue
        let message: String
        init(_ command: Command, _ header: JSONValue, _ message: String) {
            self.command = command
            self.header = header
            self.message = message
        }
        var testDescription: String { message }
    }

    @Test(
        "a bad field is refused with 400 naming the command and the field, and the request id",
        arguments: [
            BadField(.call, ["service": "url"], "CALL needs a string 'method'"),
            BadField(
                .call, ["service": "u", "method": "m", "timeoutMs": 0],
                "CALL timeoutMs must be an integer within 1...3600000"),
            BadField(.publish, [:], "PUBLISH needs a string 'event'"),
            BadField(
                .publish, ["event": "a.b", "ack": "yes"], "PUBLISH 'ack' must be true or false, not string"),
            BadField(.lookup, ["name": 3], "LOOKUP needs a string 'name'"),
            BadField(.attach, [:], "ATTACH needs a string 'token'"),
            BadField(.replay, ["after": 1], "REPLAY needs an integer 'epoch'"),
            BadField(
                .apps, ["op": "fly"],
                "unknown APPS op 'fly'; ops: start, exit, exitAll, dismiss, popToRoot, setRoot, action, list, current, find"
            ),
            BadField(
                .apps, ["op": "start", "app": "a", "mode": "sideways"],
                "unknown launch mode 'sideways'; modes: pushWithAnimation, pushNoAnimation, presentWithAnimation, presentNoAnimation"
            ),
            BadField(.apps, ["op": "exit"], "APPS exit needs a string 'session' (an id or 'top') or 'app'"),
            BadField(
                .apps, ["op": "action", "action": "open"],
                "APPS action needs a string 'session' (an id or 'top') or 'app'"),
            BadField(.boot, ["op": "run"], "BOOT run needs a string 'task'"),
            BadField(.offer, ["event": "openURL"], "OFFER is sent by the broker only"),
        ])
    func badFields(_ bad: BadField) {
        let request = ControlRequest(bad.command, requestID: Array("x9".utf8), header: bad.header)
        #expect(throws: ProtocolError(.badRequest, bad.message, requestID: Array("x9".utf8))) {
            try ClientRequest.decode(request)
        }
    }

    @Test("a broker request a service cannot read is refused naming the field")
    func badBrokerFields() {
        let request = ControlRequest(
            .app, requestID: Array("a1".utf8), header: ["session": "s1", "callback": "fly"])
        #expect(throws: ProtocolError.self) { try BrokerRequest.decode(request) }
        do {
            _ = try BrokerRequest.decode(request)
        } catch {
            #expect(
                error.message.hasPrefix("APP callback must be didCreate, ")
                    && error.message.hasSuffix("not 'fly'"))
        }
        let publish = ControlRequest(.publish, requestID: [], header: ["event": "a.b"])
        #expect(throws: ProtocolError(.badRequest, "a client does not accept PUBLISH")) {
            try BrokerRequest.decode(publish)
        }
    }

    @Test("typed replies keep every field across encode and decode")
    func replies() throws {
        let snapshot = JoinSnapshot(
            epoch: 9, sequence: 40, lifecycle: .active, bus: "tcp://h:1", heartbeat: .standard,
            topics: TopicPositions([.openURL: .init(sequence: 38, topicSequence: 4)]), replayed: nil,
            gap: GapNotice(after: 3, reason: "gone", epoch: 9, sequence: 40))
        #expect(try JoinSnapshot(json: snapshot.json) == snapshot)
        let receipt = PublishReceipt(
            event: .willTerminate, sequence: 43, epoch: 9, subscribers: 2, lifecycle: .terminating,
            acknowledged: ["push"], failed: [.init(service: "a", error: "disk full")],
            missing: [.init(service: "c", reason: "late")])
        #expect(try PublishReceipt(json: JSONParser.parse(receipt.body)) == receipt)
        #expect(
            String(
                decoding: PublishReceipt(
                    event: "a.b", sequence: 1, epoch: 2, subscribers: 0, lifecycle: .active
                ).body, as: UTF8.self)
                == #"{"epoch":2,"event":"a.b","lifecycle":"active","sequence":1,"subscribers":0}"#)
        // The plain receipt is written at its exact length: the same bytes as the tree encoder.
        for (event, sequence, epoch, subscribers, lifecycle) in [
            (EventName("bench.n1"), UInt64(0), UInt64(0), 0, LifecycleState?.none),
            ("a.b", 9, 10, 1, .active),
            ("com.example.x-y_z", 1_234_567, 1_796_147_865_981_131_357, 16, .launching),
            (.didFinishLaunching, 99, 100, 123_456, .notRunning), ("q.\"odd\\\n", 5, 6, 7, .background),
        ] {
            let plain = PublishReceipt(
                event: event, sequence: sequence, epoch: epoch, subscribers: subscribers, lifecycle: lifecycle
            )
            var tree: [String: JSONValue] = [
                "event": .string(event.rawValue), "sequence": .int(Int64(sequence)),
                "epoch": .int(Int64(epoch)),
                "subscribers": .int(Int64(subscribers)),
            ]
            if let lifecycle { tree["lifecycle"] = .string(lifecycle.rawValue) }
            #expect(plain.body == JSONWriter.encode(.object(tree)), "\(event)")
            #expect(try PublishReceipt(json: JSONParser.parse(plain.body)) == plain)
        }
        // A receipt read in place is the receipt the tree gives, for every body (or both fail).
        var bodies: [String] = [
            "", "{}", "null", #"{"epoch":1,"event":"a.b","sequence":2,"subscribers":3}"#,
            #"{"epoch":-1,"event":"a.b","lifecycle":"active","sequence":-2,"subscribers":0}"#,
            #"{"epoch":9223372036854775807,"event":"a.b","sequence":9223372036854775808,"subscribers":1}"#,
            #"{"epoch":-9223372036854775808,"event":"a.b","sequence":1.5,"subscribers":1e2}"#,
            #"{"epoch":01,"event":"a.b","sequence":2,"subscribers":3}"#,
            #"{"epoch":1,"event":"a\"b","sequence":2,"subscribers":3}"#,
            #"{"epoch":1,"event":"a.b","lifecycle":"sleepy","sequence":2,"subscribers":3}"#,
            #"{"epoch": 1,"event":"a.b","sequence":2,"subscribers":3}"#,
            #"{"epoch":1,"event":"a.b","sequence":2,"subscribers":3} "#,
            #"{"epoch":1,"event":"a.b","sequence":2,"subscribers":3,"x":1}"#,
            #"{"epoch":1,"event":"a.b","sequence":2,"subscribers":3"#,
            #"{"acknowledged":["p"],"epoch":1,"event":"a.b","failed":[],"missing":[],"sequence":2,"subscribers":1}"#,
            #"{"count":3,"epoch":1,"event":"a.b","firstSequence":1,"sequence":3,"subscribers":1}"#,
            #"{"epoch":1,"event":"é.x","sequence":2,"subscribers":3}"#, #"{"epoch":-,"event":"a"}"#,
            #"{"epoch":-9223372036854775808,"event":"a.b","sequence":-0,"subscribers":1}"#,
            #"{"epoch":12345678901234567890,"event":"a.b","sequence":2,"subscribers":3}"#,
            #"{"epoch":-9223372036854775809,"event":"a.b","sequence":2,"subscribers":3}"#,
            #"{"epoch":0,"event":"a","sequence":1,"subscribers":-1}"#,
            #"{"epoch":0,"event":"a","sequence":1,"subscribers": -1}"#,
        ]
        bodies += [
            PublishReceipt(
                event: "bench.n1", sequence: 7, epoch: 1_796_147_865_981_131_357, subscribers: 16,
                lifecycle: nil),
            PublishReceipt(
                event: .didBecomeActive, sequence: 0, epoch: 0, subscribers: 0, lifecycle: .active),
        ].map { String(decoding: $0.body, as: UTF8.self) }
        for text in bodies {
            let body = Array(text.utf8)
            let declared = try? PublishReceipt(bytes: body)
            #expect((try? PublishReceipt(body: body)) == declared, "\(text)")
        }
        var invalid = Array(#"{"epoch":1,"event":"a.b","sequence":2,"subscribers":3}"#.utf8)
        invalid[20] = 0xFF
        #expect((try? PublishReceipt(body: invalid)) == nil)
        for decision in [
            StartDecision.allow, .refuse("no"), .change(app: "b", params: ["x": 1], mode: .pushNoAnimation),
        ] {
            #expect(StartDecision(bytes: decision.bytes) == decision)
        }
        #expect(
            try Answer(body: Answer(.returnNO, payload: ["u": 1], completion: "newData").body)
                == Answer(.returnNO, payload: ["u": 1], completion: "newData"))
        #expect(throws: ProtocolError.self) { try Answer(body: Array(#"{"result":"maybe"}"#.utf8)) }
        #expect(throws: ProtocolError.self) { try Answer(body: Array("[1]".utf8)) }
        #expect(try Answer(body: Array("{}".utf8)) == Answer(.continue))
        #expect(try Answer(body: Array(#"{"payload":3}"#.utf8)).payload == nil, "a payload not an object")
        // A typed answer carries its payload and completion as text, written into the body as is.
        let typed = Answer(
            .continue, text: Array(#"{"url":"app://y"}"#.utf8), completionText: Array("true".utf8))
        let tree = Answer(.continue, payload: ["url": "app://y"], completion: true)
        #expect(typed == tree && typed.payload == ["url": "app://y"])
        let written = try JSONParser.parse(typed.body)
        #expect(typed.body == tree.body)
        #expect(written == ["result": "continue", "payload": ["url": "app://y"], "completion": true])
        #expect(try Answer(body: typed.body) == tree)
        #expect(try Answer(body: typed.body).payloadFragment?.text == Array(#"{"url":"app://y"}"#.utf8))
    }

    @Test(
        "a PUBLISH written directly is what the tree's writer and the general reader agree on, whatever its options"
    )
    func directPublishFrames() throws {
        for publish in [
            PublishRequest(event: "app.tick", payload: Array("{}".utf8)),
            PublishRequest(event: "didBecomeActive", acknowledged: false, force: true, reply: false),
            PublishRequest(
                event: "app.x", payload: Array("{\"a\":1}".utf8), acknowledged: true,
                timeoutMilliseconds: 250,
                publishID: "p-\"1\""),
        ] {
            try Self.checkAgainstTheGeneralPath(ClientRequest.publish(publish))
        }
        try Self.checkAgainstTheGeneralPath(
            ClientRequest.publish(PublishRequest(batch: [PublishedEvent("app.a"), PublishedEvent("app.b")])))
    }

    /// The frames written directly: their header is what the tree's writer makes of it (sorted keys,
    /// compact, its escapes), and the general reader gives back the request.
    private static func checkAgainstTheGeneralPath(_ request: ClientRequest) throws {
        let frames = request.frames(id: Array("k2".utf8))
        let header = frames[3]
        #expect(
            JSONWriter.encode(try JSONParser.parse(header)) == header,
            "\(String(decoding: header, as: UTF8.self))")
        guard case .request(let control) = try ControlMessage.decode(frames[...]) else {
            Issue.record("not read back as a request")
            return
        }
        #expect(try ClientRequest.decode(control) == request)
    }

    @Test("an ACK written directly is what the tree's writer and the general reader agree on")
    func directAcknowledgementFrames() throws {
        for ack in [
            Acknowledgement(sequence: 7, epoch: 99, service: "push"),
            Acknowledgement(sequence: 1 << 40, epoch: nil, service: "a\"b", error: "failed: \u{1}\n é"),
        ] {
            try Self.checkAgainstTheGeneralPath(ClientRequest.acknowledge(ack))
        }
    }

    @Test("a CALL written directly has the frames of the typed request")
    func forwardedCallFrames() throws {
        for call in [
            ServiceCall(service: "url", method: "resolve", body: Array("{}".utf8)),
            ServiceCall(service: "push-2", method: "status.get", timeoutMilliseconds: 2500),
        ] {
            try Self.checkAgainstTheGeneralPath(ClientRequest.call(call))
            // The broker forwards the same header to the service.
            #expect(
                ClientRequest.call(call).frames(id: Array("k1".utf8))
                    == BrokerRequest.call(call).controlRequest(id: Array("k1".utf8)).frames())
        }
    }

    @Test(
        "property, seeded: an answer carrying a typed value's text writes the body the tree's answer writes, and reads back as it"
    )
    func answersFromText() throws {
        struct Rewrite: Codable { var url: String; var depth: Int; var tags: [String] }
        var generator = SeededGenerator()
        let texts = ["app://x", "a\"b\\c", "é\n\u{1}", ""]
        let completions: [JSONValue?] = [nil, true, "newData", ["reply": [1, "two"]], .null, 2.5]
        for round in 0..<1_000 {
            let result = CallbackResult.allCases.randomElement(using: &generator)!
            let rewrite: Rewrite? =
                Bool.random(using: &generator)
                ? Rewrite(
                    url: texts.randomElement(using: &generator)!,
                    depth: Int.random(in: -3...3, using: &generator),
                    tags: Array(texts.shuffled(using: &generator).prefix(2)))
                : nil
            let completion = completions.randomElement(using: &generator)!
            // The typed writer keeps the type's member order; the tree's sorts. Both orders are tried.
            let sorted = Bool.random(using: &generator)
            func text<T: Encodable>(_ value: T) throws -> [UInt8] {
                sorted
                    ? JSONWriter.encode(try JSONValueEncoder.encode(value))
                    : try JSONBytesEncoder.encode(value)
            }
            let typed = Answer(
                result, text: try rewrite.map { try text($0) },
                completionText: try completion.map { try text($0) })
            let tree = Answer(
                result, payload: try rewrite.map { try JSONValueEncoder.encode($0) }, completion: completion)
            let context =
                "round \(round): \(String(decoding: typed.body, as: UTF8.self)); \(generator.replay)"
            #expect(try JSONParser.parse(typed.body) == JSONParser.parse(tree.body), "\(context)")
            if sorted { #expect(typed.body == tree.body, "\(context)") }
            #expect(typed == tree, "\(context)")
            #expect(try Answer(body: typed.body) == tree, "\(context)")
        }
    }
}
