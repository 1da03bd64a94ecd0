// lifeline-probe: a service whose events and behaviour come from its command line. It prints every
// event it receives as one JSON line on stdout, which makes it the workhorse of the integration tests
// and a handy way to watch what a given subscription sees.
import Glibc
import Lifeline

let usage = """
      --events A,B,...          events to subscribe to (built-in or custom names)
      --delay-ms MS             sleep MS in every event handler (a slow subscriber)

    methods: echo (returns its body), sleep {"ms": N} (answers after N ms),
             fail {"status": N, "message": "..."} (answers with that error), whoami
    """

var arguments = CommandLineArguments.process
var events: [EventName] = []
let delay: Int
do {
    for name in (try arguments.option("--events") ?? "").split(separator: ",") {
        events.append(try EventCatalog.validateName(String(name)))
    }
    delay = try arguments.integer("--delay-ms", in: 0...600_000) ?? 0
} catch let error as UsageError {
    Console.error("lifeline-probe: \(error.message)")
    exit(2)
} catch let error as EventValidationError {
    Console.error("lifeline-probe: \(error.message)")
    exit(2)
}

var service = Service("probe")
for name in events {
    service = service.on(name) { event in
        if delay > 0 { try await Task.sleep(for: .milliseconds(delay)) }
        let line: JSONValue = [
            "event": .string(event.name.rawValue), "sequence": .int(Int64(event.sequence)),
            "topicSequence": .int(Int64(event.topicSequence)), "payload": event.payload,
        ]
        Console.out("EVENT \(line)")
    }
}
await service
    .method("echo") { request in request.body }
    .method("sleep") { request in
        let milliseconds = request.body["ms"]?.intValue ?? 0
        try await Task.sleep(for: .milliseconds(milliseconds))
        return ["slept": .int(milliseconds)]
    }
    .method("fail") { request in
        let status = Int(request.body["status"]?.intValue ?? 500)
        throw ServiceError(Status(rawValue: status), request.body["message"]?.stringValue ?? "probe failure", details: ["probe": true])
    }
    .method("whoami") { request in ["name": .string(request.context.serviceName), "pid": .int(Int64(getpid()))] }
    .main(arguments: arguments, about: "A configurable service for tests and experiments.", usage: usage)
