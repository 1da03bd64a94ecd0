import Lifeline
import LifelineProtocol
import LifelineSupport

/// `lifeline call SERVICE METHOD [JSON | key=value ...]`.
enum CallCommand: CLICommand {
    static let name = "call"
    static let summary = "call a service method through the broker and print the reply"
    static let usage = """
        usage: lifeline call SERVICE[/KEY] METHOD [JSON] [options]
               lifeline call SERVICE[/KEY] METHOD [key=value | key:=json ...] [options]

        Sends JSON (default null) to SERVICE's METHOD through the broker and prints the reply body.
        SERVICE/KEY calls the actor of KEY of a service that hosts actors by key (cart/ana): the
        broker sends it to the one instance that key is placed on, placing it first.
        key=value arguments make an object instead, each value of the type the method's arguments are
        described with ('lifeline describe SERVICE'): count=3 is an integer, a value not of that type
        is refused, naming the field, and so is a required field left out. The call's deadline is
        --timeout; a service's own error is printed as it sent it, exit 1.
        """
    static let pretty = CommandLineOption.flag("--pretty", help: "indent the reply")
    static let options =
        [pretty]
        + ClientOptions.options(timeout: "the service's answer, also its deadline at the broker (default 5s)")

    static func run(_ arguments: inout CommandLineArguments) throws -> Int32 {
        let options = try ClientOptions(&arguments)
        let pretty = arguments.flag(Self.pretty)
        guard let address = arguments.positional(), let method = arguments.positional() else {
            throw UsageError("call needs a SERVICE and a METHOD")
        }
        let (service, key) = ActorKey.split(address)
        if service.isEmpty { throw UsageError("call needs a SERVICE, got '\(address)'") }
        if let key, let problem = ActorKey.problem(key) { throw UsageError("\(address): \(problem)") }
        let given = arguments.remainingPositionals()
        try arguments.finish()
        // One client for the arguments' lookup and the call: with no broker, the second fails at once.
        let client = try options.client()
        var body = JSONValue.null
        if given.count == 1, (try? JSONParser.parse(given[0])) != nil || !TextFormat.isPair(given[0]) {
            do { body = try JSONParser.parse(given[0]) } catch {
                throw UsageError("the body is not JSON: \(error)")
            }
        } else if !given.isEmpty {
            let needed = TextFormat.hasPlainPairs(given)
            let fields = (try? client.lookup(service, timeout: options.lookupTimeout(needed: needed))).flatMap
            {
                DeclaredFields.arguments(of: method, in: $0)
            }
            body = try TextFormat.payload(given, fields: fields)
            try fields?.checkRequired(in: body)
        }
        let call = ServiceCall(
            service: service, method: method, key: key,
            timeoutMilliseconds: options.timeout.wholeMilliseconds,
            body: JSONWriter.encode(body))
        let reply = try client.call(call, timeout: options.timeout + .seconds(1))
        let json = (try? reply.json()) ?? .string(String(decoding: reply.body, as: UTF8.self))
        guard reply.status.isSuccess else {
            Console.error(
                "lifeline call: \(address).\(method) failed with \(reply.status): \(reply.errorMessage)")
            if json.objectValue.map({ $0.count > 1 }) == true { Console.out(json.description) }
            return 1
        }
        Console.out(pretty ? TextFormat.pretty(json) : json.description)
        return 0
    }
}
