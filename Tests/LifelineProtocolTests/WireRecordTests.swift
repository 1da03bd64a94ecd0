import TestSupport
import Testing

@testable import LifelineProtocol

/// The replies and records declared once (``WireRecord``): each writes its fields in sorted order,
/// the same bytes a tree of it would give, and reads back what it wrote.
@Suite("Wire records: one declaration reads and writes replies", .timeLimit(.minutes(1)))
struct WireRecordTests {
    /// Writes `record`, checks its keys are sorted and are `expected`, that its bytes are the tree
    /// writer's for the same object, and reads it back from bytes and from a tree.
    static func check<Record: WireRecord & Equatable>(_ record: Record, keys expected: [String]) throws {
        let bytes = record.bytes
        let keys = try HeaderMessageTests.keys(of: bytes)
        #expect(keys == keys.sorted(), "\(Record.recordName) writes \(keys)")
        #expect(keys == expected, "\(Record.recordName) writes \(keys)")
        #expect(JSONWriter.encode(try JSONParser.parse(bytes)) == bytes, "\(Record.recordName)")
        #expect(try Record(bytes: bytes) == record)
        #expect(try Record(json: record.json) == record)
    }

    static let topics = TopicPositions([
        .openURL: .init(sequence: 9, topicSequence: 4), "com.example.b": .init(sequence: 3, topicSequence: 1),
    ])

    @Test("every reply with its fields set is written in sorted order and read back")
    func everyReply() throws {
        var info = BrokerInfo(
            buses: ["tcp://h:1", "ipc:///b"], epoch: UInt64.max - 1, sequence: 42, lifecycle: .active,
            heartbeat: HeartbeatSettings(intervalMilliseconds: 250, liveness: 4),
            maximumMessageBytes: 1 << 20,
            journal: .init(events: 3, firstSequence: 40, capacity: 1000, maximumAgeMilliseconds: 60_000),
            pid: 7,
            host: "h", version: "1.2")
        (info.requestsHandled, info.secure) = (99, true)
        try Self.check(
            info,
            keys: [
                "broker", "bus", "buses", "curve", "epoch", "heartbeat", "journal", "lifecycle",
                "maxMessageBytes",
                "protocol", "requests", "sequence",
            ])
        let gap = GapNotice(after: 3, reason: "journal trimmed", epoch: 5, sequence: 9)
        try Self.check(
            JoinSnapshot(
                epoch: 5, sequence: 9, lifecycle: .background, bus: "tcp://h:1", heartbeat: .standard,
                topics: Self.topics, replayed: 2, gap: gap),
            keys: ["bus", "epoch", "gap", "heartbeat", "lifecycle", "replayed", "sequence", "topics"])
        try Self.check(
            ReplayResult(epoch: 5, sequence: 9, topics: Self.topics, replayed: nil, gap: gap),
            keys: ["epoch", "gap", "sequence", "topics"])
        try Self.check(
            BootTaskOutcome.Record(outcome: "skipped", reason: "condition"), keys: ["outcome", "reason"])
        #expect(BootTaskOutcome(bytes: BootTaskOutcome.skipped(reason: "no").bytes) == .skipped(reason: "no"))
        #expect(BootTaskOutcome(bytes: Array("not json".utf8)) == .done, "anything but a skip is done")
        try Self.check(
            StartDecision.Record(
                action: "change", app: "b", mode: "pushNoAnimation", params: ["x": 1], reason: "r"),
            keys: ["action", "app", "mode", "params", "reason"])
        #expect(
            StartDecision(bytes: Array(#"{"action":"refuse","reason":7}"#.utf8)) == .refuse("no reason given")
        )
        #expect(StartDecision(bytes: Array("[]".utf8)) == .allow, "anything unreadable allows the start")
        try Self.check(
            AttachReceipt(bus: "tcp://h:1", epoch: 5, sequence: 9, lifecycle: .active),
            keys: ["bus", "epoch", "lifecycle", "sequence"])
        try Self.check(
            ActorPlacement(
                service: "cart", key: "ana", instance: "i1", host: "h", pid: 4, sinceMilliseconds: 1_700_000,
                calls: 12, inFlight: 1, waiting: true),
            keys: ["calls", "host", "inFlight", "instance", "key", "pid", "service", "sinceMs", "waiting"])
        try Self.check(
            SessionRecord(
                id: "s1", app: "home", params: ["a": 1], mode: .presentNoAnimation, host: "shell",
                state: .running,
                parent: nil, createdAt: 10, updatedAt: 11, root: ["title": "Home"], instance: "i2"),
            keys: [
                "app", "createdAt", "host", "id", "instance", "mode", "params", "parent", "root", "state",
                "updatedAt",
            ])
        var outcome = DispatchOutcome(
            event: .openURL, dispatch: 3, result: .returnYES, returnValue: true, decidedBy: "url",
            payload: ["url": "x"],
            trace: [
                .init(
                    service: "url", event: .openURL, status: "answered", answer: .returnYES,
                    durationMicroseconds: 80,
                    error: nil),
                .init(
                    service: "push", event: .openURL, status: "timeout", answer: nil,
                    durationMicroseconds: 900,
                    error: "no answer"),
            ], lifecycle: "active")
        (outcome.durationMicroseconds, outcome.handlers) = (1000, 2)
        try Self.check(
            outcome,
            keys: [
                "decidedBy", "dispatch", "durationUs", "event", "handlers", "lifecycle", "payload", "result",
                "returnValue", "trace",
            ])
        try Self.check(
            ServiceRecord.Instance(
                instance: "i1", pid: 4, host: "h", registeredAtMilliseconds: 5, lastSeenMillisecondsAgo: 6,
                inFlight: 0, connected: false, dropped: 2),
            keys: [
                "connected", "dropped", "host", "inFlight", "instance", "lastHeartbeatMsAgo", "pid",
                "registeredAt",
            ])
        // A service record: its registration's fields but the attach token, the broker's among them,
        // put in sorted order by the writer.
        var registration = ServiceRegistration(
            name: "cart", instance: "i1", pid: 7, host: "h", events: [.openURL], methods: ["add"],
            attachToken: "secret")
        registration.replicable = true
        var record = ServiceRecord(
            registration: registration, registeredAtMilliseconds: 5, lastSeenMillisecondsAgo: 6,
            uptimeMilliseconds: 7, started: true, dropped: 3)
        record.instances = [
            ServiceRecord.Instance(
                instance: "i1", pid: 7, host: "h", registeredAtMilliseconds: 5, lastSeenMillisecondsAgo: 6,
                inFlight: 1, connected: true, dropped: 3)
        ]
        record.registration.attachToken = ""
        try Self.check(
            record,
            keys: [
                "apps", "bootTasks", "deadlines", "describe", "dropped", "events", "heartbeat", "host",
                "instance", "instances", "interceptor", "lastHeartbeatMsAgo", "lazy", "methods", "name",
                "pid",
                "priorities", "registeredAt", "replicable", "started", "uptimeMs",
            ])
        #expect(!String(decoding: ServiceList(services: [record]).bytes, as: UTF8.self).contains("secret"))
        try Self.check(ServiceList(services: [record, record]), keys: ["services"])
    }

    @Test(
        "REGISTER: every field of a registration, a resume and held keys, written in sorted order and read back"
    )
    func register() throws {
        var registration = ServiceRegistration(
            name: "cart", instance: "i1", pid: 7, host: "h", events: ["com.example.added", .openURL],
            methods: ["add", "list"], heartbeat: HeartbeatSettings(intervalMilliseconds: 200, liveness: 2),
            attachToken: "t", priorities: [.openURL: 5], deadlines: ["com.example.added": 900],
            apps: ["home"],
            lazy: true, interceptorPriority: 3,
            bootTasks: [
                BootTask(name: "cart.warm", service: "cart", condition: .environment("WARM", equals: nil)),
                BootTask(
                    name: "cart.load", service: "cart", kind: .start, phase: "setup", priority: 2,
                    isAsynchronous: true, after: ["cart.warm"], condition: .launchOption("url"),
                    deadlineMilliseconds: 300, isRequired: true, runsOnce: true),
            ])
        registration.description.methods["add"] = .init(summary: "adds", arguments: "{}", reply: "{}")
        (registration.replicable, registration.idempotent) = (true, ["list"])
        (registration.shared, registration.keyedMethods) = (["com.example.added"], ["add"])
        let request = RegisterRequest(
            registration, resume: EventCursor(epoch: 9, sequence: 4), holding: ["ana"])
        let header = request.header
        let keys = try HeaderMessageTests.keys(of: header)
        #expect(keys == keys.sorted(), "REGISTER writes \(keys)")
        #expect(
            keys == [
                "apps", "attach", "bootTasks", "deadlines", "describe", "events", "heartbeat", "holding",
                "host",
                "idempotent", "instance", "interceptor", "keyed", "lazy", "methods", "name", "pid",
                "priorities",
                "replicable", "resume", "shared",
            ])
        #expect(JSONWriter.encode(try JSONParser.parse(header)) == header)
        let back = try RegisterRequest(HeaderFields(try JSONParser.parse(header), what: "REGISTER"))
        #expect(back == request)
        // A task named without its service's prefix gets it; one of another service is refused.
        var fields = try JSONParser.parse(header).objectValue!
        fields["bootTasks"] = [["name": "short"]]
        fields["holding"] = nil
        let read = try ServiceRegistration(json: .object(fields))
        #expect(read.bootTasks.map(\.name) == ["cart.short"] && read.bootTasks[0].service == "cart")
        fields["bootTasks"] = [["name": "other.task"]]
        let refused = #expect(throws: ProtocolError.self) { try ServiceRegistration(json: .object(fields)) }
        #expect(
            refused?.message
                == "REGISTER 'bootTasks': boot task other.task of cart must be named cart.something")
        fields["bootTasks"] = [["name": "cart."]]
        let empty = #expect(throws: ProtocolError.self) { try ServiceRegistration(json: .object(fields)) }
        #expect(
            empty?.message == "REGISTER 'bootTasks': boot task cart. of cart must be named cart.something")
        fields["bootTasks"] = [["name": "cart.x", "condition": ["nothing": 1]]]
        let condition = #expect(throws: ProtocolError.self) { try ServiceRegistration(json: .object(fields)) }
        #expect(
            condition?.message
                == #"REGISTER 'bootTasks'[0] 'condition' is {"launchOption": key}, {"env": NAME, "equals": value} or {"check": true}"#
        )
        fields["bootTasks"] = []
        fields["priorities"] = ["didBecomeActive": 1]
        let stray = #expect(throws: ProtocolError.self) { try ServiceRegistration(json: .object(fields)) }
        #expect(stray?.message == "REGISTER 'priorities' names didBecomeActive, which is not in 'events'")
        // The description: read back whole, and each of its rules refused in its words.
        fields["priorities"] = nil
        fields["describe"] = [
            "methods": ["add": ["summary": "adds", "arguments": "{}", "reply": "{}"]],
            "events": ["com.example.added": ["summary": "", "fields": ["items": "number"]]],
        ]
        let described = try ServiceRegistration(json: .object(fields)).description
        #expect(described.methods["add"] == .init(summary: "adds", arguments: "{}", reply: "{}"))
        #expect(described.events["com.example.added"]?.fields == ["items": "number"])
        #expect(try ServiceDescription(bytes: described.bytes) == described)
        for (describe, message) in [
            (
                ["methods": ["nope": ["summary": "x"]]] as JSONValue,
                "REGISTER 'describe' names the method 'nope', which is not in 'methods'"
            ),
            (
                ["events": ["openURL": ["summary": "x"]]],
                "REGISTER 'describe' may describe custom events only (with a namespace), not 'openURL'"
            ),
            (
                ["methods": ["add": ["summary": .string(String(repeating: "x", count: 17_000))]]],
                "REGISTER 'describe' is at most 16384 bytes"
            ),
            (
                ["methods": [:], "unknown": .string(String(repeating: "y", count: 17_000))],
                "REGISTER 'describe' is at most 16384 bytes"
            ),
            (
                ["events": ["com.example.added": ["fields": ["items": 3]]]],
                "REGISTER 'describe' 'events.com.example.added' 'fields.items' must be a string"
            ),
        ] {
            fields["describe"] = describe
            let refusal = #expect(throws: ProtocolError.self) {
                try ServiceRegistration(json: .object(fields))
            }
            #expect(refusal?.message == message)
        }
        fields["describe"] = .null
        #expect(try ServiceRegistration(json: .object(fields)).description.isEmpty)
    }

    @Test(
        "the APPS replies: each shape with and without its optional fields, as the broker wrote them by hand")
    func appsReplies() throws {
        let home = SessionRecord(
            id: "s1", app: "home", params: ["tab": 2], mode: .pushWithAnimation, host: "shell",
            state: .running,
            parent: nil, createdAt: 10, updatedAt: 11)
        var detail = home
        (detail.id, detail.app, detail.parent, detail.instance) = ("s2", "detail", "s1", "i2")
        try Self.check(AppsReplies.Change(stack: [home]), keys: ["stack"])
        try Self.check(
            AppsReplies.Change(stack: [home, detail], session: detail, exited: [home], repeated: true),
            keys: ["exited", "repeated", "session", "stack"])
        try Self.check(AppsReplies.List(stack: [home], launcher: "home"), keys: ["launcher", "stack"])
        try Self.check(AppsReplies.List(stack: [], launcher: nil), keys: ["launcher", "stack"])
        #expect(
            AppsReplies.List(stack: [], launcher: nil).bytes == Array(#"{"launcher":null,"stack":[]}"#.utf8))
        try Self.check(AppsReplies.Current(session: home), keys: ["session"])
        #expect(AppsReplies.Current(session: nil).bytes == Array(#"{"session":null}"#.utf8))
        try Self.check(AppsReplies.Found(sessions: [home, detail]), keys: ["sessions"])
        // What the broker wrote as a tree before: the same bytes.
        let tree: JSONValue = [
            "stack": .array([home.json, detail.json]), "session": detail.json, "exited": .array([home.json]),
        ]
        #expect(
            AppsReplies.Change(stack: [home, detail], session: detail, exited: [home]).bytes
                == JSONWriter.encode(tree))
    }

    @Test("the BOOT replies: a report with its tasks and without, before a boot, a start, a task run")
    func bootReplies() throws {
        var report = BootReplies.Report(
            boot: 3, state: "running", launchOptions: ["url": "app://x"], phases: ["a", "b"],
            missing: ["push"],
            startedAt: 1_700_000_000_000)
        try Self.check(report, keys: ["boot", "launchOptions", "missing", "phases", "startedAt", "state"])
        var task = BootReplies.Report.Task()
        (task.name, task.service, task.kind, task.phase, task.priority) = (
            "push.warm", "push", "task", "a", -2
        )
        (task.after, task.isAsynchronous, task.isRequired, task.runsOnce) = (["url.warm"], true, true, false)
        (task.state, task.startMilliseconds, task.durationMilliseconds) = ("done", 4, 12)
        var waiting = BootReplies.Report.Task()
        (waiting.name, waiting.service, waiting.state, waiting.reason) = (
            "url.warm", "url", "waiting", "no url"
        )
        report.tasks = [task, waiting]
        (report.blame, report.criticalChain, report.error, report.durationMilliseconds) = (
            ["push.warm"], ["push.warm"], "push.warm failed", 40
        )
        try Self.check(
            report,
            keys: [
                "blame", "boot", "criticalChain", "durationMs", "error", "launchOptions", "missing", "phases",
                "startedAt", "state", "tasks",
            ])
        // A task as the broker wrote it by hand: every field, null where it has no value.
        let tree: JSONValue = [
            "name": "url.warm", "service": "url", "kind": "", "phase": "", "priority": 0, "async": false,
            "after": [], "required": false, "runOnce": false, "state": "waiting", "reason": "no url",
            "startMs": .null, "durationMs": .null,
        ]
        #expect(waiting.bytes == JSONWriter.encode(tree))
        try Self.check(
            BootReplies.NotStarted(phases: ["a"], planned: []), keys: ["phases", "planned", "state"])
        try Self.check(BootReplies.Started(boot: 1, state: "running"), keys: ["boot", "state"])
        try Self.check(
            BootReplies.TaskRun(task: "t", outcome: "done", reason: nil), keys: ["outcome", "reason", "task"])
        #expect(
            BootReplies.TaskRun(task: "t", outcome: "done", reason: nil).bytes
                == Array(#"{"outcome":"done","reason":null,"task":"t"}"#.utf8))
    }

    @Test("the STATS reply: broker figures, events, services with methods and instances, read back")
    func statsReport() throws {
        var group = StatsReport.Group()
        (group.name, group.member, group.term, group.commit, group.last) = ("demo", "a", UInt64.max, 7, 9)
        var leader = StatsReport.Group.Member()
        (leader.member, leader.role, leader.index, leader.lag) = ("a", "leader", 9, 0)
        var unreached = StatsReport.Group.Member()
        (unreached.member, unreached.role) = ("b", "unreached")
        group.members = [leader, unreached]
        (group.etcd.endpoints, group.etcd.healthy, group.etcd.leaseValidMilliseconds) = (
            ["http://e:1"], true, 900
        )
        var broker = StatsReport.Broker()
        (broker.epoch, broker.sequence, broker.curve) = (UInt64.max - 3, 12, true)
        broker.latencyBoundsMilliseconds = [0.5, 1, 2.5]
        broker.journal.events = 12
        var method = StatsReport.Method()
        (method.requests, method.errors, method.buckets) = (3, 1, [2, 1, 0])
        (method.meanMilliseconds, method.p50Milliseconds) = (0.75, 0.5)
        var service = StatsReport.Service()
        (service.registered, service.pid, service.dropped) = (true, 42, 1)
        service.methods = [StatsReport.Name(rawValue: "resolve"): method]
        service.handled = [StatsReport.Name(rawValue: "openURL"): 7]
        var instance = StatsReport.Instance()
        (instance.instance, instance.host, instance.pid, instance.connected) = ("i1", "h", 9, true)
        service.instances = [instance]
        var shared = StatsReport.Shared()
        (shared.inFlight, shared.sent) = (1, 5)
        service.shared = shared
        let report = StatsReport(
            broker: broker, events: [.openURL: 7],
            services: [
                StatsReport.Name(rawValue: "url"): service, StatsReport.Name(rawValue: "gone"): .init(),
            ],
            group: group)
        try Self.check(report, keys: ["broker", "events", "group", "services"])
        let tree = try JSONParser.parse(report.bytes)
        #expect(tree["services"]?["gone"]?["pid"] == .null, "a service only remembered has a null pid")
        #expect(tree["services"]?["url"]?["methods"]?["resolve"]?["p99Ms"] == .null)
        #expect(tree["broker"]?["epoch"] == .int(-4), "the epoch's bit pattern, as HELLO writes it")
        #expect(tree["group"]?["term"] == .int(-1))
        #expect(
            tree["group"]?["members"]?.arrayValue?.last == ["member": "b", "role": "unreached"],
            "a member not reached has no index, lag or age")
        #expect(StatsReport.Method().bytes.count > 0)
        var infinite = StatsReport.Method()
        infinite.p99Milliseconds = .infinity
        #expect(try JSONParser.parse(infinite.bytes)["p99Ms"] == .null, "a number that is not finite is null")
    }

    @Test("a topology's override of a boot task: its fields replace the task's, through the declaration")
    func bootTaskOverride() throws {
        var task = BootTask(
            name: "push.warm", service: "push", phase: "services", priority: 3, after: ["url.warm"],
            condition: .launchOption("push"), deadlineMilliseconds: 5000)
        try task.apply(["priority": -1, "condition": .null, "name": "other.name", "service": "other"])
        #expect(
            task.priority == -1 && task.condition == nil, "present fields replace, a null condition clears")
        #expect(task.after == ["url.warm"] && task.deadlineMilliseconds == 5000 && task.phase == "services")
        #expect(task.name == "push.warm" && task.service == "push", "its name and service stay")
        try task.apply(["condition": ["env": "WARM", "equals": "1"], "runOnce": true])
        #expect(task.condition == .environment("WARM", equals: "1") && task.runsOnce)
        let refused = #expect(throws: ProtocolError.self) { try task.apply(["deadlineMs": 0]) }
        #expect(refused?.message.hasPrefix("boot task push.warm: ") == true, "\(refused?.message ?? "")")
        #expect(refused?.message.contains("deadlineMs") == true)
        #expect(throws: ProtocolError.self) { try task.apply(["priority": "high"]) }
        #expect(throws: ProtocolError.self) { try task.apply(["push"]) }
        #expect(task.priority == -1, "a refused override changes nothing")
    }

    @Test("what a reply lacks takes the value its absence means; a wrong kind is refused, naming the field")
    func absentAndWrong() throws {
        let snapshot = try JoinSnapshot(bytes: Array(#"{"epoch":-2,"sequence":7}"#.utf8))
        #expect(snapshot.epoch == UInt64.max - 1 && snapshot.sequence == 7 && snapshot.heartbeat == .standard)
        #expect(snapshot.topics.positions.isEmpty && snapshot.gap == nil && snapshot.lifecycle == .notRunning)
        let missing = #expect(throws: ProtocolError.self) {
            try JoinSnapshot(bytes: Array(#"{"epoch":1}"#.utf8))
        }
        #expect(missing?.message == "the REGISTER reply needs an integer 'sequence'")
        let nested = #expect(throws: ProtocolError.self) {
            try JoinSnapshot(bytes: Array(#"{"epoch":1,"sequence":2,"topics":{"a":{"sequence":-1}}}"#.utf8))
        }
        #expect(
            nested?.message
                == "the REGISTER reply 'topics.a' 'sequence' must be a non-negative integer, not -1")
        let step = #expect(throws: ProtocolError.self) {
            try DispatchOutcome(bytes: Array(#"{"trace":[{"service":"a"},{"service":5}]}"#.utf8))
        }
        #expect(step?.message == "the DISPATCH reply 'trace'[1] 'service' must be a string, not number")
        #expect(throws: ProtocolError.self) { try BrokerInfo(bytes: Array("[1]".utf8)) }
        #expect(throws: ProtocolError.self) { try BrokerInfo(bytes: Array("{".utf8)) }
        let session = #expect(throws: ProtocolError.self) {
            try SessionRecord(json: [
                "id": "s1", "app": "a", "host": "h", "mode": "sideways", "state": "running",
            ])
        }
        #expect(
            session?.message
                == "a session record mode must be pushWithAnimation, pushNoAnimation, presentWithAnimation or presentNoAnimation, not 'sideways'"
        )
    }
}

/// Replies whose usual form is written without the declaration's general writer, and records
/// written by it, against the tree's writer on random field values.
@Suite("Wire records against the tree's writer, seeded", .timeLimit(.minutes(1)))
struct WireRecordPropertyTests {
    static let names = [
        "app.tick", "didBecomeActive", "a\"b", "a\\b", "tab\tname", "café", "a.\u{212A}", "x\u{1}y",
    ]

    /// A number at the edges of a field's range: an epoch's is 64 bits (written as the signed
    /// integer of the same bits), a sequence's 0 to 2^63 − 1 (PROTOCOL section 2).
    static func number(_ generator: inout SeededGenerator, epoch: Bool = false) -> UInt64 {
        let edges: [UInt64] = [
            0, 1, 9, 10, UInt64(Int64.max), UInt64.random(in: 0...(1 << 40), using: &generator),
        ]
        return (epoch ? edges + [UInt64(Int64.max) + 1, .max] : edges).randomElement(using: &generator)!
    }

    static func receipt(_ generator: inout SeededGenerator) -> PublishReceipt {
        var receipt = PublishReceipt(
            event: EventName(rawValue: names.randomElement(using: &generator)!),
            sequence: number(&generator, epoch: true), epoch: number(&generator, epoch: true),
            subscribers: Int.random(in: 0...100_000, using: &generator),
            lifecycle: Bool.random(using: &generator)
                ? LifecycleState.allCases.randomElement(using: &generator) : nil)
        switch Int.random(in: 0..<4, using: &generator) {
        case 0:
            receipt.acknowledged = Array(names.shuffled(using: &generator).prefix(2)).sorted()
            receipt.failed = [.init(service: names.randomElement(using: &generator)!, error: "boom \u{7}")]
            receipt.missing = [.init(service: "late", reason: "timeout")]
        case 1:
            receipt.count = Int.random(in: 2...1024, using: &generator)
            receipt.sequence = max(receipt.sequence, UInt64(receipt.count))
        case 2: receipt.subscribersByEvent = ["app.a": 1, "b\"": 0]
        default: break
        }
        return receipt
    }

    @Test(
        "property, seeded: a receipt's body (its usual form written at its exact length) is the declared record's bytes, canonical, and reads back in place and in full"
    )
    func receipts() throws {
        var generator = SeededGenerator()
        for round in 0..<2_000 {
            let receipt = Self.receipt(&generator)
            let body = receipt.body
            let context = "round \(round): \(String(decoding: body, as: UTF8.self)); \(generator.replay)"
            #expect(body == receipt.bytes, "\(context)")
            #expect(JSONWriter.encode(try JSONParser.parse(body)) == body, "\(context)")
            #expect(try PublishReceipt(bytes: body) == receipt, "\(context)")
            #expect(try PublishReceipt(body: body) == receipt, "\(context)")
            if body != receipt.bytes { return }
        }
    }

    @Test(
        "property, seeded: a join snapshot with random names and numbers is written as the tree's writer writes it and read back"
    )
    func snapshots() throws {
        var generator = SeededGenerator()
        for round in 0..<1_000 {
            var positions: [EventName: TopicPositions.Position] = [:]
            for name in Self.names.shuffled(using: &generator).prefix(
                Int.random(in: 0...4, using: &generator))
            {
                positions[EventName(rawValue: name)] = .init(
                    sequence: Self.number(&generator), topicSequence: Self.number(&generator))
            }
            let snapshot = JoinSnapshot(
                epoch: Self.number(&generator, epoch: true), sequence: Self.number(&generator),
                lifecycle: LifecycleState.allCases.randomElement(using: &generator)!,
                bus: Self.names.randomElement(using: &generator)!, heartbeat: .standard,
                topics: TopicPositions(positions),
                replayed: Bool.random(using: &generator) ? Int.random(in: 0...9, using: &generator) : nil,
                gap: Bool.random(using: &generator)
                    ? GapNotice(
                        after: Self.number(&generator), reason: Self.names.randomElement(using: &generator)!,
                        epoch: 1, sequence: 2)
                    : nil)
            let bytes = snapshot.bytes
            let context = "round \(round): \(String(decoding: bytes, as: UTF8.self)); \(generator.replay)"
            #expect(JSONWriter.encode(try JSONParser.parse(bytes)) == bytes, "\(context)")
            #expect(try JoinSnapshot(bytes: bytes) == snapshot, "\(context)")
        }
    }

    @Test("a receipt and a service record print as one line of what they say, nothing of the wire")
    func descriptions() {
        let receipt = PublishReceipt(
            event: "com.example.x", sequence: 28, epoch: 3, subscribers: 2, lifecycle: nil,
            acknowledged: ["cart"], failed: [.init(service: "push", error: "boom")],
            missing: [.init(service: "rates", reason: "no acknowledgement within 5000 ms")])
        #expect(
            "\(receipt)"
                == "published com.example.x #28 (epoch 3) to 2 subscribed services; acknowledged by cart; push failed: boom; rates did not acknowledge: no acknowledgement within 5000 ms"
        )
        var batch = PublishReceipt(
            event: "com.example.x", sequence: 28, epoch: 3, subscribers: 1, lifecycle: nil)
        batch.count = 5
        #expect("\(batch)" == "published 5 events #24…#28 (epoch 3) to 1 subscribed service")
        let record = ServiceRecord(
            registration: ServiceRegistration(
                name: "cart", instance: "i1", pid: 7, host: "h", events: [.openURL],
                methods: ["add", "count"],
                attachToken: "secret"),
            registeredAtMilliseconds: 5, lastSeenMillisecondsAgo: 6, uptimeMilliseconds: 7, started: true)
        #expect("\(record)" == "cart (pid 7 on h; events: openURL; methods: add, count; started)")
    }
}
