import Lifeline
import LifelineProtocol
import LifelineSupport

/// `lifeline publish EVENT [key=value ...]`.
enum PublishCommand: CLICommand {
    static let name = "publish"
    static let summary = "publish a lifecycle event on the bus"
    static let help = """
        usage: lifeline publish EVENT [key=value | key:=json ...] [options]
               lifeline publish EVENT '{"json": "object"}' [options]

        Asks the broker to publish EVENT; prints its sequence number and how many registered services
        subscribe to it. 'lifeline events' lists the built-in events and their fields; custom events
        need a namespace, e.g. com.example.cartDidChange.

        willResignActive, didEnterBackground, willTerminate and didReceiveMemoryWarning are acknowledged:
        publish waits until every subscribed service has handled the event (or --timeout passes) and
        reports who did not; it exits 1 when any subscriber did not acknowledge.

        options:
          --ack           wait for acknowledgements for any event
          --no-ack        do not wait, even for the events above
          --force         publish even when the event makes no sense in the current lifecycle state
        \(ClientOptions.help)
        """

    static func run(_ arguments: inout CommandLineArguments) throws -> Int32 {
        let options = try ClientOptions(&arguments)
        let ack = arguments.flag("--ack")
        let noAck = arguments.flag("--no-ack")
        let force = arguments.flag("--force")
        if ack && noAck { throw UsageError("--ack and --no-ack exclude each other") }
        let (event, payload) = try TextFormat.event(&arguments, for: "publish")
        var header: [String: JSONValue] = [
            "event": .string(event.rawValue), "timeoutMs": .int(Int64(options.timeoutMilliseconds)),
        ]
        if ack || noAck { header["ack"] = .bool(ack) }
        if force { header["force"] = true }
        let request = ControlRequest(.publish, header: .object(header), payload: JSONWriter.encode(payload))
        let reply = try options.client().request(
            request, timeoutMilliseconds: options.timeoutMilliseconds + 2000)
        let body = try reply.json()
        let missing = body["missing"]?.arrayValue ?? []
        let failed = body["failed"]?.arrayValue ?? []
        if options.json {
            Console.out(body.description)
        } else {
            let subscribers = body["subscribers"]?.intValue ?? 0
            let noun = subscribers == 1 ? "service" : "services"
            var line =
                "published \(event) #\(body["sequence"]?.intValue ?? 0) to \(subscribers) subscribed \(noun)"
            if let acknowledged = body["acknowledged"]?.arrayValue {
                let names = acknowledged.compactMap(\.stringValue)
                line +=
                    "; acknowledged by \(names.count) of \(subscribers)"
                    + (names.isEmpty ? "" : " (\(names.joined(separator: ", ")))")
            }
            Console.out(line)
            for entry in failed {
                Console.error(
                    "  \(entry["service"]?.stringValue ?? "?") handled it with an error: \(entry["error"]?.stringValue ?? "")"
                )
            }
            for entry in missing {
                Console.error(
                    "  \(entry["service"]?.stringValue ?? "?") did not acknowledge: \(entry["reason"]?.stringValue ?? "")"
                )
            }
        }
        return missing.isEmpty && failed.isEmpty ? 0 : 1
    }
}
