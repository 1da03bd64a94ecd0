import Lifeline
import LifelineBroker
import LifelineProtocol
import LifelineSupport
import Synchronization

/// `lifeline tail [EVENT ...]`.
enum TailCommand: CLICommand {
    static let name = "tail"
    static let summary = "print bus events as they are published"
    static let usage = """
        usage: lifeline tail [EVENT|PATTERN ...] [options]

        Subscribes to EVENTs (default: every event) and prints one line per event until interrupted.
        A PATTERN has '*' for any run of characters ('com.example.*', 'did*', '*'). Once subscribed
        it writes '# tailing ...' to stderr: nothing published after that is missed. When the broker
        restarts with a new epoch (its sequences begin again) it says so on stderr.
        """
    static let count = CommandLineOption.value("--count", "N", help: "exit after N events")
    static let all = CommandLineOption.flag(
        "--all",
        help:
            "also show every dispatch step (dispatchDidStep) and call (callDidFinish): the broker publishes them while a tail asks it to (a TRACE lease)"
    )
    static let options =
        [count, all]
        + ClientOptions.options(
            timeout: "the subscription to be in place (default 5s; then it tails until interrupted)")

    static func run(_ arguments: inout CommandLineArguments) throws -> Int32 {
        let options = try ClientOptions(&arguments)
        let count = try arguments.integer(Self.count, in: 1...Int.max)
        let all = arguments.flag(Self.all)
        var events: [EventName] = []
        var patterns: [String] = []
        for name in arguments.remainingPositionals() {
            if name.contains("*") {
                patterns.append(name)
                continue
            }
            do { events.append(try EventCatalog.validateName(name)) } catch {
                throw UsageError(error.message)
            }
        }
        try arguments.finish()
        // Patterns are matched here, on a subscription to every event.
        let traces: [EventName] = [.dispatchDidStep, .callDidFinish]
        if all && !events.isEmpty { events += traces }
        let everything = events.isEmpty || !patterns.isEmpty
        let client = try options.client()
        let subscriber = try client.subscribeWhole(to: everything ? nil : events, timeout: options.timeout)
        var leaseRenewal = SystemClock.monotonicNanoseconds()
        if all {
            _ = try client.request(.trace(seconds: 10), timeout: options.timeout)
            leaseRenewal += 5_000_000_000
        }
        let wanted = Set(events)
        func shows(_ name: EventName) -> Bool {
            if traces.contains(name) && !all && !wanted.contains(name) { return false }
            guard !patterns.isEmpty else { return true }
            return wanted.contains(name) || patterns.contains { AccessPolicy.matches($0, name.rawValue) }
        }
        let interrupted = Atomic<Bool>(false)
        let watcher = SignalWatcher { _ in interrupted.store(true, ordering: .relaxed) }
        Console.error(
            "# tailing \(events.isEmpty && patterns.isEmpty ? "every event" : (events.map(\.rawValue) + patterns).joined(separator: ", ")) on \(subscriber.endpoint)"
        )
        var printed = 0
        var epoch: UInt64?
        while !interrupted.load(ordering: .relaxed) {
            if all, SystemClock.monotonicNanoseconds() >= leaseRenewal {
                _ = try client.request(.trace(seconds: 10), timeout: options.timeout)
                leaseRenewal = SystemClock.monotonicNanoseconds() + 5_000_000_000
            }
            let message: BusMessage
            do {
                guard let next = try subscriber.next(timeout: .milliseconds(200)) else { continue }
                message = next
            } catch let error as ProtocolError {
                Console.error("# skipped a malformed bus message: \(error.message)")
                continue
            }
            if let known = epoch, known != message.header.epoch {
                Console.error(
                    "# the broker restarted with a new epoch (\(message.header.epoch)): its sequences begin again"
                )
            }
            epoch = message.header.epoch
            guard shows(message.name) else { continue }
            Console.out(line(for: message, json: options.json))
            printed += 1
            if let count, printed >= count { break }
        }
        withExtendedLifetime(watcher) {}
        return 0
    }

    static func line(for message: BusMessage, json: Bool) -> String {
        let payload =
            (try? JSONParser.parse(message.payload))
            ?? .string(String(decoding: message.payload, as: UTF8.self))
        let time = Console.timestamp(wallNanoseconds: message.header.publishedWallNanoseconds)
        if json {
            let object: JSONValue = [
                "event": .string(message.name.rawValue), "sequence": .int(Int64(message.header.sequence)),
                "topicSequence": .int(Int64(message.header.topicSequence)),
                "epoch": .int(Int64(message.header.epoch)),
                "publishedAt": .string(time), "acknowledge": .bool(message.header.flags & 1 == 1),
                "payload": payload,
            ]
            return object.description
        }
        return "\(time) #\(message.header.sequence) \(message.name) \(payload)"
    }
}
