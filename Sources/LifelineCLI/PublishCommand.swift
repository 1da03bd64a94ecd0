import Lifeline
import LifelineProtocol

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

        options:
          --ack           ask subscribers to acknowledge (flag bit 0 of the bus header)
        \(ClientOptions.help)
        """

    static func run(_ arguments: inout CommandLineArguments) throws -> Int32 {
        let options = try ClientOptions(&arguments)
        let acknowledged = arguments.flag("--ack")
        guard let name = arguments.positional() else { throw UsageError("publish needs an EVENT") }
        let payload = try TextFormat.payload(arguments.remainingPositionals())
        try arguments.finish()
        let event: EventName
        do {
            event = try EventCatalog.validateName(name)
            try EventCatalog.validatePublication(event, payload: payload)
        } catch {
            throw UsageError(error.message)
        }
        let receipt = try options.client().publish(
            event, payload: JSONWriter.encode(payload), acknowledged: acknowledged, timeoutMilliseconds: options.timeoutMilliseconds)
        if options.json {
            Console.out(
                JSONValue.object([
                    "event": .string(receipt.event.rawValue), "sequence": .int(Int64(receipt.sequence)),
                    "epoch": .int(Int64(receipt.epoch)), "subscribers": .int(Int64(receipt.subscribers)),
                ]).description)
        } else {
            let noun = receipt.subscribers == 1 ? "service" : "services"
            Console.out("published \(receipt.event) #\(receipt.sequence) to \(receipt.subscribers) subscribed \(noun)")
        }
        return 0
    }
}
