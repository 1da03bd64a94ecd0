import Lifeline
import LifelineProtocol
import LifelineSupport

/// `lifeline dispatch EVENT [key=value ...]`.
enum DispatchCommand: CLICommand {
    static let name = "dispatch"
    static let summary = "offer an event to its handlers in order and print their verdict"
    static let usage = """
        usage: lifeline dispatch EVENT [key=value | key:=json ...] [options]

        The broker offers EVENT to the services that handle it, one after another: higher priority
        first, ties by registration order. Each answers continue, return, returnYES or returnNO and may
        rewrite the payload for the services after it; the first answer that is not continue decides.
        didFinishLaunching runs beforeDidFinishLaunching, the handle chain (returnYES / returnNO end the
        launch early) and afterDidFinishLaunching. Events with a completion (performFetch,
        didReceiveRemoteNotification, performActionForShortcutItem, handleActionForLocalNotification,
        handleWatchKitExtensionRequest) go to all their handlers at once and complete exactly once.
        Prints the result, who decided, the final payload, the completion and every step.
        """
    static let stepTimeout = CommandLineOption.value(
        "--step-timeout", "MS",
        help: "deadline of each step (default 2000; performFetch and remote notifications 30000)")
    static let force = CommandLineOption.flag(
        "--force", help: "dispatch even when the event makes no sense in the current lifecycle state")
    static let options =
        [stepTimeout, force]
        + ClientOptions.options(
            timeout:
                "the whole dispatch chain's outcome (default: long enough for 20 steps of the longest deadline; each step has its own --step-timeout)"
        )

    static func run(_ arguments: inout CommandLineArguments) throws -> Int32 {
        let options = try ClientOptions(&arguments)
        let stepTimeout = try arguments.integer(Self.stepTimeout, in: 1...3_600_000)
        let force = arguments.flag(Self.force)
        let connection = options.sharedClient()
        let (event, payload) = try TextFormat.event(&arguments, for: "dispatch") { event, needed in
            try DeclaredFields.described(
                event, by: connection().services(timeout: options.lookupTimeout(needed: needed)))
        }
        let dispatch = DispatchRequest(
            event: event, payload: payload, stepTimeoutMilliseconds: stepTimeout, force: force)
        let longest = max(
            stepTimeout ?? 2000, EventCatalog.descriptor(for: event)?.deadlineMilliseconds ?? 2000)
        // A given --timeout bounds the whole chain; without one, long steps get the time they may take.
        let reply: ControlReply
        do {
            reply = try connection().request(
                .dispatch(dispatch),
                timeout: options.givenTimeout ?? max(options.timeout, .milliseconds(longest * 20 + 5000)))
        } catch let error as LifelineError where error.status == .timeout && options.givenTimeout != nil {
            throw LifelineError(
                .timeout,
                "the dispatch did not finish within --timeout \(options.givenTimeout?.wholeMilliseconds ?? 0) ms; the broker goes on with its steps"
            )
        }
        let body = try reply.json()
        if options.json {
            Console.out(body.description)
            return 0
        }
        let outcome = try DispatchOutcome(json: body)
        var lines = [
            "\(outcome.event) dispatch #\(outcome.dispatch): \(outcome.result.rawValue)"
                + (outcome.decidedBy.map { " (decided by \($0))" } ?? " (nobody decided)")
        ]
        if let value = outcome.returnValue { lines.append("  returns:    \(value ? "YES" : "NO")") }
        if let completion = outcome.completion { lines.append("  completion: \(completion)") }
        if outcome.launchEndedEarly == true {
            lines.append("  launch ended early: afterDidFinishLaunching skipped")
        }
        lines.append("  payload:    \(outcome.payload)")
        lines.append("  lifecycle:  \(outcome.lifecycle)")
        if outcome.trace.isEmpty { lines.append("  no service handles \(outcome.event)") }
        for (index, step) in outcome.trace.enumerated() {
            let what = step.answer?.rawValue ?? step.status
            let time = String(format: "%.1f ms", Double(step.durationMicroseconds) / 1000)
            lines.append(
                "  \(index + 1). \(step.service) [\(step.event)] \(what) in \(time)"
                    + (step.error.map { " — \($0)" } ?? ""))
        }
        Console.out(lines.joined(separator: "\n"))
        return 0
    }
}
