import Lifeline
import LifelineProtocol
import LifelineSupport

/// `lifeline actors [SERVICE]`.
enum ActorsCommand: CLICommand {
    static let name = "actors"
    static let summary = "list where the actors by key are placed"
    static let usage = """
        usage: lifeline actors [SERVICE] [options]

        Prints one row per actor by key the broker has placed (of SERVICE, or of every service):
        its address (service/key), the instance that hosts it, that instance's host and pid, how long
        it has been placed there, the calls sent to it since and those not answered yet. WAITING
        marks a key whose instance lost its connection: calls to it wait for the instance to come
        back, or for its heartbeat window to pass (then the key moves). --json prints the broker's
        reply as it is.
        """
    static let options = ClientOptions.options(timeout: "the broker's answer (default 5s)")

    static func run(_ arguments: inout CommandLineArguments) throws -> Int32 {
        let options = try ClientOptions(&arguments)
        let service = arguments.positional()
        try arguments.finish()
        let body = try options.client().request(.actors(service: service), timeout: options.timeout).json()
        if options.json {
            Console.out(body.description)
            return 0
        }
        let placements = try (body["actors"]?.arrayValue ?? []).map { (value) throws(ProtocolError) in
            try ActorPlacement(json: value)
        }
        if placements.isEmpty {
            Console.out(service.map { "no actor of \($0) is placed" } ?? "no actor by key is placed")
            return 0
        }
        let now = Int64(SystemClock.wallNanoseconds() / 1_000_000)
        let rows = placements.map { placement in
            [
                "\(placement.service)/\(placement.key)", placement.instance, placement.host,
                String(placement.pid),
                TextFormat.duration(milliseconds: max(0, now - placement.sinceMilliseconds)),
                String(placement.calls), String(placement.inFlight), placement.waiting ? "WAITING" : "-",
            ]
        }
        Console.out(
            TextFormat.table(
                ["ACTOR", "INSTANCE", "HOST", "PID", "SINCE", "CALLS", "IN FLIGHT", "STATE"], rows))
        return 0
    }
}
