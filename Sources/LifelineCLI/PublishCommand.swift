import Lifeline
import LifelineProtocol
import LifelineSupport

/// `lifeline publish EVENT [key=value ...]`.
enum PublishCommand: CLICommand {
    static let name = "publish"
    static let summary = "publish a lifecycle event on the bus"
    static let usage = """
        usage: lifeline publish EVENT [key=value | key:=json ...] [options]
               lifeline publish EVENT '{"json": "object"}' [options]

        Asks the broker to publish EVENT; prints its sequence number and how many registered services
        subscribe to it. 'lifeline events' lists the built-in events and their fields; custom events
        need a namespace, e.g. com.example.cartDidChange.

        key=value takes the type the event's field is declared with (the catalogue's, or what the
        registered services describe: 'lifeline describe SERVICE'): items=3 is an integer, urgent=true a
        boolean; a value that is not of that type is refused, naming the field. key:=json gives any JSON.
        A custom event given as pairs, or with no payload, must hold every field the services that
        describe it require (refused otherwise, naming them); one JSON object is sent as it is.

        willResignActive, didEnterBackground, willTerminate and didReceiveMemoryWarning are acknowledged:
        publish waits until every subscribed service has handled the event (or --timeout passes) and
        reports who did not; it exits 1 when any subscriber did not acknowledge.
        """
    static let ack = CommandLineOption.flag("--ack", help: "wait for acknowledgements for any event")
    static let noAck = CommandLineOption.flag("--no-ack", help: "do not wait, even for the events above")
    static let force = CommandLineOption.flag(
        "--force", help: "publish even when the event makes no sense in the current lifecycle state")
    static let options =
        [ack, noAck, force]
        + ClientOptions.options(
            timeout:
                "every subscriber's acknowledgement (--ack) at the broker, which answers when it passes; the CLI gives the receipt 2 s more (default 5s)"
        )

    static func run(_ arguments: inout CommandLineArguments) throws -> Int32 {
        let options = try ClientOptions(&arguments)
        let ack = arguments.flag(Self.ack)
        let noAck = arguments.flag(Self.noAck)
        let force = arguments.flag(Self.force)
        if ack && noAck { throw UsageError("--ack and --no-ack exclude each other") }
        let connection = options.sharedClient()
        let (event, payload) = try TextFormat.event(&arguments, for: "publish") { event, needed in
            try DeclaredFields.described(
                event, by: connection().services(timeout: options.lookupTimeout(needed: needed)))
        }
        let publication = PublishRequest(
            event: event, payload: JSONWriter.encode(payload), acknowledged: ack || noAck ? ack : nil,
            timeoutMilliseconds: options.timeout.wholeMilliseconds, force: force)
        let client = try connection()
        // A lifecycle event moves the application's state: say from what to what.
        let before =
            LifecycleState.target(of: event) == nil
            ? nil : try client.hello(timeout: options.timeout).lifecycle
        let receipt = try client.publish(publication, timeout: options.timeout + .seconds(2))
        let after =
            before == nil ? nil : try receipt.lifecycle ?? client.hello(timeout: options.timeout).lifecycle
        if options.json {
            Console.out(String(decoding: receipt.body, as: UTF8.self))
        } else {
            let subscribers = receipt.subscribers
            let noun = subscribers == 1 ? "service" : "services"
            var line = "published \(event) #\(receipt.sequence) to \(subscribers) subscribed \(noun)"
            if let names = receipt.acknowledged {
                line +=
                    "; acknowledged by \(names.count) of \(subscribers)"
                    + (names.isEmpty ? "" : " (\(names.sorted().joined(separator: ", ")))")
            }
            Console.out(line)
            if let before, let after {
                Console.out(
                    before == after
                        ? "lifecycle: \(after.rawValue) (unchanged)"
                        : "lifecycle: \(before.rawValue) → \(after.rawValue)")
            }
            for entry in receipt.failed {
                Console.error("  \(entry.service) handled it with an error: \(entry.error)")
            }
            for entry in receipt.missing {
                Console.error("  \(entry.service) did not acknowledge: \(entry.reason)")
            }
        }
        return receipt.missing.isEmpty && receipt.failed.isEmpty ? 0 : 1
    }
}
