// lifeline-probe: a service whose events and behaviour come from its command line. It prints every
// event it handles as one JSON line on stdout, which makes it the workhorse of the integration tests
// and a handy way to watch what a given subscription sees or how a dispatch chain behaves.
import Foundation
import Glibc
import Lifeline
import LifelineProtocol
import LifelineSupport

/// The probe's own options; the standard ones (ServiceRunner.Options) follow them.
enum ProbeOptions {
    static let events = CommandLineOption.value(
        "--events", "A,B,...", help: "events to handle (built-in or custom names)")
    static let priority = CommandLineOption.value(
        "--priority", "N", help: "dispatch priority for all its events (higher first; default 0)")
    static let stepDeadline = CommandLineOption.value(
        "--step-deadline", "MS", help: "how long the broker lets it take per dispatch step")
    static let answer = CommandLineOption.value(
        "--answer", "RESULT",
        help: "answer to dispatched events: continue (default), return, returnYES, returnNO")
    static let rewrite = CommandLineOption.value(
        "--rewrite", "KEY=VALUE",
        help: "when dispatched, rewrite the payload field KEY for the services after it")
    static let completion = CommandLineOption.value(
        "--completion", "JSON",
        help: "completion to give dispatched events that carry one (e.g. '\"newData\"')")
    static let delayMs = CommandLineOption.value(
        "--delay-ms", "MS", help: "take MS milliseconds in every handler (a slow service)")
    static let fail = CommandLineOption.flag(
        "--fail", help: "every handler throws (acknowledged events are acknowledged with the error)")
    static let journal = CommandLineOption.value(
        "--journal", "FILE",
        help:
            "append every handled event to FILE and resume from its last line when restarted (exactly-once handling across restarts); instances of one name may share FILE: a --shared event it holds already is not handled again"
    )
    static let apps = CommandLineOption.value(
        "--apps", "A,B,...", help: "host these micro-apps; every callback prints 'CALLBACK session app name'")
    static let lazy = CommandLineOption.flag(
        "--lazy", help: "start only on the first lookup or call (prints 'STARTED' when started)")
    static let replicable = CommandLineOption.flag(
        "--replicable", help: "one of several instances of its name (start several with the same --name)")
    static let idempotent = CommandLineOption.value(
        "--idempotent", "M,N,...",
        help: "methods the broker may send to another instance when the one answering goes away")
    static let shared = CommandLineOption.value(
        "--shared", "A,B,...",
        help: "of its --events, those each delivered to one instance of its name only (acknowledged)")
    static let tasks = CommandLineOption.value(
        "--tasks", "JSON",
        help:
            "boot tasks: [{\"name\", \"ms\", \"phase\", \"async\", \"after\", \"runOnce\", \"required\", \"fail\", \"launchOption\", \"deadlineMs\"}], each sleeping ms milliseconds (prints 'TASK name')"
    )
    static let all = [
        events, priority, stepDeadline, answer, rewrite, completion, delayMs, fail, journal, apps, lazy,
        replicable, idempotent, shared, tasks,
    ]
}

let about = """
    A configurable service for tests and experiments.

    methods: echo (returns its body), sleep {"ms": N} (answers after N ms), spin {"ms": N} (awaits once,
             then computes for N ms without suspending), compute {"ms": N} (inline: computes for N ms
             on the socket thread, one call at a time per process), block {"ms": N} (inline: holds
             the socket thread for N ms, as a blocking synchronous handler would),
             fail {"status": N, "message": "..."} (answers with that error), whoami,
             register {"name": N, "lazy": bool} (registers service N, answering echo and whoami, at run
             time), unregister {"name": N}
    """

var arguments = CommandLineArguments.process(declaring: ProbeOptions.all + ServiceRunner.Options.declared)
var events: [EventName] = []
let settings:
    (
        priority: Int?, deadline: Int?, answer: CallbackResult, rewrite: (String, String)?,
        completion: JSONValue?, delay: Int, fail: Bool, journal: String?
    )
var hostedApps: [String] = []
var lazy = false
var replicable = false
var idempotent: [String] = []
var sharedEvents: [EventName] = []
var tasks: [JSONValue] = []
do {
    for name in (try arguments.option(ProbeOptions.events) ?? "").split(separator: ",") {
        events.append(try EventCatalog.validateName(String(name)))
    }
    let answerText = try arguments.option(ProbeOptions.answer) ?? "continue"
    guard let answer = CallbackResult(rawValue: answerText) else {
        throw UsageError("--answer must be continue, return, returnYES or returnNO")
    }
    var rewrite: (String, String)?
    if let text = try arguments.option(ProbeOptions.rewrite) {
        guard let equals = text.firstIndex(of: "=") else { throw UsageError("--rewrite needs KEY=VALUE") }
        rewrite = (String(text[..<equals]), String(text[text.index(after: equals)...]))
    }
    var completion: JSONValue?
    if let text = try arguments.option(ProbeOptions.completion) {
        do { completion = try JSONParser.parse(text) } catch {
            throw UsageError("--completion is not JSON: \(error)")
        }
    }
    hostedApps = (try arguments.option(ProbeOptions.apps) ?? "").split(separator: ",").map(String.init)
    lazy = arguments.flag(ProbeOptions.lazy)
    replicable = arguments.flag(ProbeOptions.replicable)
    idempotent = (try arguments.option(ProbeOptions.idempotent) ?? "").split(separator: ",").map(String.init)
    for name in (try arguments.option(ProbeOptions.shared) ?? "").split(separator: ",") {
        sharedEvents.append(try EventCatalog.validateName(String(name)))
    }
    if let text = try arguments.option(ProbeOptions.tasks) {
        do { tasks = try JSONParser.parse(text).arrayValue ?? [] } catch {
            throw UsageError("--tasks is not a JSON array: \(error)")
        }
    }
    settings = (
        try arguments.integer(ProbeOptions.priority, in: -1_000_000...1_000_000),
        try arguments.integer(ProbeOptions.stepDeadline, in: 1...3_600_000),
        answer, rewrite, completion, try arguments.integer(ProbeOptions.delayMs, in: 0...600_000) ?? 0,
        arguments.flag(ProbeOptions.fail),
        try arguments.option(ProbeOptions.journal)
    )
} catch let error as UsageError {
    Console.error("lifeline-probe: \(error.message)")
    exit(2)
} catch let error as EventValidationError {
    Console.error("lifeline-probe: \(error.message)")
    exit(2)
}

/// The probe's durable record: one line per handled event, `epoch:sequence event payload`.
struct Journal: Sendable {
    let path: String

    func append(_ event: Event) {
        let line = "\(event.cursor) \(event.name) \(event.payload)\n"
        let descriptor = open(path, O_WRONLY | O_APPEND | O_CREAT, 0o644)
        guard descriptor >= 0 else { return }
        _ = line.withCString { write(descriptor, $0, strlen($0)) }
        close(descriptor)
    }

    /// True when an event with `cursor` is in the file already (an instance of the name handled it,
    /// and died before acknowledging it).
    func holds(_ cursor: EventCursor) -> Bool {
        guard let text = try? String(contentsOfFile: path, encoding: .utf8) else { return false }
        return text.hasPrefix("\(cursor) ") || text.contains("\n\(cursor) ")
    }

    /// The cursor of the last line, if any.
    func lastCursor() -> EventCursor? {
        guard let text = try? String(contentsOfFile: path, encoding: .utf8) else { return nil }
        return text.split(separator: "\n").last.flatMap { EventCursor(String($0.prefix { $0 != " " })) }
    }
}

/// A micro-app that only traces its callbacks.
actor TracedApp: MicroAppDelegate {
    private func trace(_ session: AppSession, _ callback: String) {
        Console.out("CALLBACK \(session.id) \(session.app) \(callback)")
    }
    func didCreate(_ session: AppSession) async { trace(session, "didCreate") }
    func willStartLaunching(_ session: AppSession, options: JSONValue) async {
        trace(session, "willStartLaunching")
    }
    func didFinishLaunching(_ session: AppSession) async { trace(session, "didFinishLaunching") }
    func willPause(_ session: AppSession) async { trace(session, "willPause") }
    func willResume(_ session: AppSession, options: JSONValue) async { trace(session, "willResume") }
    func didResume(_ session: AppSession, options: JSONValue) async { trace(session, "didResume") }
    func willTerminate(_ session: AppSession, animated: Bool) async { trace(session, "willTerminate") }
    func childDidFinish(_ session: AppSession, child: SessionRecord, result: JSONValue) async {
        trace(session, "childDidFinish \(child.id) \(result)")
    }
}

let journal = settings.journal.map(Journal.init(path:))
let sharedNames = Set(sharedEvents)
var service = Service("probe")
for name in events {
    service = service.handle(
        name, priority: settings.priority, deadline: settings.deadline.map { .milliseconds($0) }
    ) { event in
        Console.out(
            "BEGIN \(event.name) sequence=\(event.sequence) dispatch=\(event.dispatchID.map(String.init) ?? "-")"
        )
        if settings.delay > 0 { try await Task.sleep(for: .milliseconds(settings.delay)) }
        if settings.fail { throw ServiceError(.internalError, "probe told to fail") }
        // A shared event sent again because its instance died before acknowledging it: instances
        // that share the journal handle it once.
        if let journal, sharedNames.contains(event.name), journal.holds(event.cursor) {
            Console.out("SKIPPED \(event.name) sequence=\(event.sequence): the journal holds it")
            return Answer(settings.answer)
        }
        if event.dispatchID == nil { journal?.append(event) }
        let line: JSONValue = [
            "event": .string(event.name.rawValue), "sequence": .int(Int64(event.sequence)),
            "topicSequence": .int(Int64(event.topicSequence)), "payload": event.payload,
            "replayed": .bool(event.isReplayed),
            "dispatch": event.dispatchID.map { .int(Int64($0)) } ?? .null,
        ]
        Console.out("EVENT \(line)")
        var answer = Answer(settings.answer)
        if let (key, value) = settings.rewrite, case .object(var members) = event.payload {
            members[key] = .string(value)
            answer.payload = .object(members)
        }
        if EventCatalog.descriptor(for: event.name)?.completion != nil {
            answer.completion = settings.completion
        }
        return answer
    }
}
if let journal { service = service.resume { journal.lastCursor() } }
for app in hostedApps { service = service.app(app) { _ in TracedApp() } }
for task in tasks {
    let name = task["name"]?.stringValue ?? "task"
    let milliseconds = task["ms"]?.intValue ?? 0
    let fails = task["fail"]?.boolValue ?? false
    service = service.bootTask(
        name, phase: task["phase"]?.stringValue ?? "services", priority: Int(task["priority"]?.intValue ?? 0),
        async: task["async"]?.boolValue ?? false,
        after: (task["after"]?.arrayValue ?? []).compactMap(\.stringValue),
        when: task["launchOption"]?.stringValue.map { .launchOption($0) },
        deadline: .milliseconds(task["deadlineMs"]?.intValue ?? Int64(BootTask.defaultDeadlineMilliseconds)),
        required: task["required"]?.boolValue ?? false,
        runOnce: task["runOnce"]?.boolValue ?? false
    ) { context in
        Console.out("TASK \(context.task)")
        try await Task.sleep(for: .milliseconds(milliseconds))
        if fails { throw ServiceError(.internalError, "\(name) told to fail") }
    }
}
for method in idempotent { service = service.idempotent(method) }
for event in sharedEvents { service = service.shared(event) }
/// The `ms` of a sleep, spin, compute or block call: 0 when left out, at most 10 minutes.
@Sendable func duration(_ request: CallRequest) throws -> Int64 {
    guard let given = request.body["ms"] else { return 0 }
    guard let milliseconds = given.intValue, (0...600_000).contains(milliseconds) else {
        throw ServiceError(
            .badRequest, "'ms' must be an integer within 0...600000, got \(given)")
    }
    return milliseconds
}
await service
    .lazy(lazy)
    .replicable(replicable)
    .start { context in Console.out("STARTED \(context.serviceName)") }
    .onGap { notice, context in context.log("GAP after #\(notice.after): \(notice.reason)") }
    .method("echo") { request in request.body }
    .method("sleep") { request in
        let milliseconds = try duration(request)
        try await Task.sleep(for: .milliseconds(milliseconds))
        return ["slept": .int(milliseconds)]
    }
    .method("spin") { request in
        // `"await": false` computes from the first instruction, with no suspension before it.
        if request.body["await"] != false { try await Task.sleep(for: .milliseconds(1)) }
        let milliseconds = try duration(request)
        let clock = ContinuousClock()
        let until = clock.now + .milliseconds(milliseconds)
        var rounds: Int64 = 0
        while clock.now < until { rounds &+= 1 }  // CPU work that never suspends
        return ["spun": .int(milliseconds), "rounds": .int(rounds)]
    }
    .methodInline("compute") { request in
        let milliseconds = try duration(request)
        let clock = ContinuousClock()
        let until = clock.now + .milliseconds(milliseconds)
        var rounds: Int64 = 0
        while clock.now < until { rounds &+= 1 }  // CPU work, one call at a time per process
        return ["computed": .int(milliseconds), "rounds": .int(rounds)]
    }
    .methodInline("block") { request in
        let milliseconds = try duration(request)
        usleep(useconds_t(milliseconds) * 1000)
        return ["blocked": .int(milliseconds)]
    }
    .method("fail") { request in
        let status = Int(request.body["status"]?.intValue ?? 500)
        throw ServiceError(
            Status(rawValue: status), request.body["message"]?.stringValue ?? "probe failure",
            details: ["probe": true])
    }
    .method("whoami") { request in
        ["name": .string(request.context.serviceName), "pid": .int(Int64(getpid()))]
    }
    .method("register") { request in
        let name = request.body["name"]?.stringValue ?? ""
        let added = Service(name)
            .method("echo") { $0.body }
            .method("whoami") { call in
                ["name": .string(call.context.serviceName), "pid": .int(Int64(getpid()))]
            }
            .start { _ in Console.out("STARTED \(name)") }
            .willDestroy { _ in Console.out("DESTROYED \(name)") }
        do {
            try await request.context.registerService(
                request.body["lazy"]?.boolValue == true ? added.lazy() : added)
        } catch let error as LifelineError {
            throw ServiceError(error.status, error.message)
        }
        Console.out("REGISTERED \(name)")
        return ["registered": .string(name)]
    }
    .method("unregister") { request in
        let name = request.body["name"]?.stringValue ?? ""
        do { try await request.context.unregisterService(name) } catch let error as LifelineError {
            throw ServiceError(error.status, error.message)
        }
        return ["unregistered": .string(name)]
    }
    .main(arguments: arguments, about: about)
