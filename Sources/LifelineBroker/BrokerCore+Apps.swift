import LifelineProtocol

/// APPS: the Context's micro-app stack. Reads (list, current, find) are answered at once; changes
/// (start, exit, exitAll, dismiss, popToRoot, setRoot, action) queue and run one at a time, delivering
/// their callbacks to the hosts in order, each answered (or timed out) before the next.
extension BrokerCore {
    static let appOperations = [
        "start", "exit", "exitAll", "dismiss", "popToRoot", "setRoot", "action", "list", "current", "find",
    ]

    var stackBody: JSONValue { .array(stack.sessions.map(\.json)) }

    mutating func apps(
        _ request: ControlRequest, from peer: [UInt8], now: UInt64, into output: inout [BrokerOutput]
    ) {
        let id = request.requestID
        let operation = request.header["op"]?.stringValue ?? ""
        switch operation {
        case "list":
            send(
                peer,
                ControlReply(
                    requestID: id,
                    json: [
                        "stack": stackBody,
                        "launcher": configuration.launcherApp.map { .string($0) } ?? .null,
                    ]), into: &output)
        case "current":
            send(
                peer, ControlReply(requestID: id, json: ["session": stack.top?.json ?? .null]), into: &output)
        case "find":
            guard let app = request.header["app"]?.stringValue else {
                refuse(
                    peer, ProtocolError(.badRequest, "APPS find needs a string 'app'", requestID: id),
                    into: &output)
                return
            }
            if request.header["all"]?.boolValue == true {
                send(
                    peer, ControlReply(requestID: id, json: ["sessions": .array(stack.all(app).map(\.json))]),
                    into: &output)
            } else if let record = stack.newest(app) {
                send(peer, ControlReply(requestID: id, json: record.json), into: &output)
            } else {
                send(
                    peer,
                    ControlReply.error(
                        .notFound, "no session of the app '\(app)' is on the stack", requestID: id),
                    into: &output)
            }
        case _ where Self.appOperations.contains(operation):
            appQueue.append(.request(request, peer: peer))
            pumpApps(now: now, into: &output)
        default:
            refuse(
                peer,
                ProtocolError(
                    .badRequest,
                    "unknown APPS op '\(operation)'; ops: \(Self.appOperations.joined(separator: ", "))",
                    requestID: id), into: &output)
        }
    }

    /// Starts queued operations while none is in progress.
    mutating func pumpApps(now: UInt64, into output: inout [BrokerOutput]) {
        while appTransition == nil, !appQueue.isEmpty {
            let operation = appQueue.removeFirst()
            beginApp(operation, now: now, into: &output)
            if appTransition != nil { advanceApp(now: now, into: &output) }
        }
    }

    private var wallMilliseconds: (UInt64) -> Int64 { { Int64(self.wall(at: $0) / 1_000_000) } }

    /// The live hosts that offer `app`, in registration order.
    func hosts(offering app: String) -> [ServiceRegistry.Entry] {
        registry.entries.values.filter { $0.registration.apps.contains(app) }.sorted { $0.order < $1.order }
    }

    private mutating func beginApp(_ operation: AppOperation, now: UInt64, into output: inout [BrokerOutput])
    {
        var transition = AppTransition(operation: operation, stage: .delivering)
        switch operation {
        case .crash(let host):
            transition.outcome = stack.removeHost(host, now: wallMilliseconds(now))
            transition.callbacks = transition.outcome.callbacks
            for record in transition.outcome.crashed {
                output.append(
                    .log("session \(record.id) (\(record.app)) crashed with its host \(record.host)"))
                publishRuntime(
                    .appDidCrash,
                    [
                        "session": .string(record.id), "app": .string(record.app),
                        "host": .string(record.host),
                    ], now: now, into: &output)
            }
            output.append(.persist(file: "sessions.json", document: stack.json))
        case .attach(let host):
            transition.callbacks = stack.attach(host: host, now: wallMilliseconds(now))
            if transition.callbacks.isEmpty { return }
            output.append(.log("restored \(transition.callbacks.count) session(s) of \(host)"))
        case .launch:
            guard let launcher = configuration.launcherApp, stack.newest(launcher) == nil,
                !hosts(offering: launcher).isEmpty
            else { return }
            transition.start = AppTransition.Start(
                app: launcher, params: .emptyObject, mode: .pushNoAnimation, clearTop: true, parent: nil,
                replacesRoot: false)
            transition.stage = .intercepting
            output.append(.log("starting the Launcher app '\(launcher)'"))
        case .request(let request, _):
            guard beginRequest(request, now: now, into: &transition) else {
                finishApp(transition, now: now, into: &output)
                return
            }
        }
        appTransition = transition
    }

    /// Reads and checks an APPS request; plans it when no interceptor or veto comes first. False when
    /// it failed already (`transition.failure`).
    private mutating func beginRequest(
        _ request: ControlRequest, now: UInt64, into transition: inout AppTransition
    )
        -> Bool
    {
        let header = request.header
        let operation = header["op"]?.stringValue ?? ""
        func fail(_ status: Status, _ message: String) -> Bool {
            transition.failure = (status, message)
            return false
        }
        func session() -> SessionRecord? {
            if let id = header["session"]?.stringValue { return id == "top" ? stack.top : stack.session(id) }
            if let app = header["app"]?.stringValue { return stack.newest(app) }
            return nil
        }
        switch operation {
        case "start", "setRoot":
            guard let app = header["app"]?.stringValue else {
                return fail(.badRequest, "APPS \(operation) needs a string 'app'")
            }
            var mode = LaunchMode.pushWithAnimation
            if let text = header["mode"]?.stringValue {
                guard let parsed = LaunchMode(rawValue: text) else {
                    return fail(
                        .badRequest,
                        "unknown launch mode '\(text)'; modes: \(LaunchMode.allCases.map(\.rawValue).joined(separator: ", "))"
                    )
                }
                mode = parsed
            }
            let params = header["params"] ?? .emptyObject
            guard case .object = params else {
                return fail(.badRequest, "APPS \(operation) 'params' must be a JSON object")
            }
            let parent = header["parent"]?.stringValue
            if let parent, stack.session(parent) == nil {
                return fail(.notFound, "no session '\(parent)' to be the parent")
            }
            transition.start = AppTransition.Start(
                app: app, params: params, mode: mode, clearTop: header["clearTop"]?.boolValue ?? false,
                parent: parent,
                replacesRoot: operation == "setRoot")
            transition.stage = .intercepting
            transition.interceptors = registry.entries.values.filter {
                $0.registration.interceptorPriority != nil
            }
            .sorted {
                ($0.registration.interceptorPriority ?? 0, -Int($0.order)) > (
                    $1.registration.interceptorPriority ?? 0, -Int($1.order)
                )
            }
            .map(\.registration.name)
            return true
        case "exit":
            guard let record = session() else {
                return fail(
                    .notFound,
                    "no such session on the stack (give 'session' as an id like s3, or 'app' as a name)")
            }
            let forced = header["force"]?.boolValue ?? false
            if !forced, let problem = stack.exitProblem(record.id) { return fail(.conflict, problem) }
            transition.exit = (record.id, header["result"], header["animated"]?.boolValue ?? true)
            if forced || record.state == .detached || registry.entry(named: record.host) == nil {
                planExit(&transition, now: now)
            } else {
                transition.stage = .vetoing
            }
            return true
        case "exitAll":
            transition.outcome = stack.exitAll(now: wallMilliseconds(now))
            transition.callbacks = transition.outcome.callbacks
            return true
        case "dismiss":
            guard let outcome = stack.dismiss(now: wallMilliseconds(now)) else {
                return fail(.notFound, "no presented session to dismiss")
            }
            transition.outcome = outcome
            transition.callbacks = outcome.callbacks
            return true
        case "popToRoot":
            transition.outcome = stack.popToRoot(now: wallMilliseconds(now))
            transition.callbacks = transition.outcome.callbacks
            return true
        case "action":
            guard let record = session() else { return fail(.notFound, "no such session on the stack") }
            guard let action = header["action"]?.stringValue else {
                return fail(.badRequest, "APPS action needs a string 'action'")
            }
            transition.callbacks = [
                AppCallback(record, .action, ["action": .string(action), "body": header["body"] ?? .null])
            ]
            return true
        default:
            return fail(.badRequest, "unknown APPS op '\(operation)'")
        }
    }

    private mutating func planExit(_ transition: inout AppTransition, now: UInt64) {
        guard let exit = transition.exit else { return }
        let forced = transition.stage != .vetoing
        transition.outcome = stack.exit(
            exit.session, result: exit.result, animated: exit.animated, forced: forced,
            now: wallMilliseconds(now))
        transition.callbacks = transition.outcome.callbacks
        transition.stage = .delivering
    }

    private mutating func planStart(_ transition: inout AppTransition, now: UInt64) {
        guard let start = transition.start else { return }
        guard let host = hosts(offering: start.app).first else {
            let offered = Set(registry.entries.values.flatMap(\.registration.apps)).sorted()
            transition.failure = (
                .notFound,
                "no live host offers the app '\(start.app)'; offered apps: \(offered.isEmpty ? "none" : offered.joined(separator: ", "))"
            )
            return
        }
        let at = wallMilliseconds(now)
        transition.outcome =
            start.replacesRoot
            ? stack.setRoot(
                app: start.app, host: host.registration.name, params: start.params, mode: start.mode,
                parent: start.parent, now: at)
            : stack.start(
                app: start.app, host: host.registration.name, params: start.params, mode: start.mode,
                clearTop: start.clearTop,
                parent: start.parent, now: at)
        transition.callbacks = transition.outcome.callbacks
        transition.stage = .delivering
    }

    /// Sends the next interceptor request, veto or callback, or finishes.
    mutating func advanceApp(now: UInt64, into output: inout [BrokerOutput]) {
        while var transition = appTransition, transition.awaiting == nil {
            if transition.failure != nil {
                appTransition = nil
                finishApp(transition, now: now, into: &output)
                pumpApps(now: now, into: &output)
                return
            }
            switch transition.stage {
            case .intercepting:
                if transition.interceptors.isEmpty {
                    planStart(&transition, now: now)
                } else {
                    let name = transition.interceptors.removeFirst()
                    if let entry = registry.entry(named: name), let start = transition.start {
                        let header: JSONValue = [
                            "app": .string(start.app), "params": start.params,
                            "mode": .string(start.mode.rawValue),
                            "clearTop": .bool(start.clearTop),
                            "parent": start.parent.map { .string($0) } ?? .null,
                        ]
                        transition.awaiting = expectAnswer(from: name, "INTERCEPT of \(start.app)", now: now)
                        output.append(
                            .send(
                                peer: entry.peer,
                                frames: ControlRequest(
                                    .intercept, requestID: transition.awaiting!.requestID, header: header
                                ).frames()))
                    }
                }
            case .vetoing:
                if let exit = transition.exit, let record = stack.session(exit.session),
                    let entry = registry.entry(named: record.host)
                {
                    transition.awaiting = expectAnswer(
                        from: record.host, "\(record.app).shouldTerminate", now: now)
                    output.append(
                        .send(
                            peer: entry.peer,
                            frames: appFrames(
                                AppCallback(record, .shouldTerminate), id: transition.awaiting!.requestID)))
                } else {
                    planExit(&transition, now: now)
                }
            case .delivering:
                guard transition.next < transition.callbacks.count else {
                    appTransition = nil
                    finishApp(transition, now: now, into: &output)
                    pumpApps(now: now, into: &output)
                    return
                }
                let callback = transition.callbacks[transition.next]
                transition.next += 1
                let detached =
                    stack.session(callback.session)?.state == .detached && callback.name != .restore
                if !detached, let entry = registry.entry(named: callback.host) {
                    transition.awaiting = expectAnswer(
                        from: callback.host,
                        "\(callback.app).\(callback.name.rawValue) (\(callback.session))", now: now)
                    output.append(
                        .send(
                            peer: entry.peer, frames: appFrames(callback, id: transition.awaiting!.requestID))
                    )
                } else if callback.name == .action {
                    transition.failure = (
                        .unavailable, "the host of \(callback.session) (\(callback.app)) is not connected"
                    )
                }
            }
            appTransition = transition
        }
    }

    private mutating func expectAnswer(from service: String, _ what: String, now: UInt64)
        -> AppTransition.Awaiting
    {
        appCounter += 1
        return AppTransition.Awaiting(
            requestID: Array("a\(appCounter)".utf8),
            deadline: deadline(now, configuration.appCallbackTimeoutMilliseconds), service: service,
            what: what)
    }

    func appFrames(_ callback: AppCallback, id: [UInt8]) -> [[UInt8]] {
        let header: JSONValue = [
            "session": .string(callback.session), "app": .string(callback.app),
            "callback": .string(callback.name.rawValue),
        ]
        return ControlRequest(
            .app, requestID: id, header: header, payload: JSONWriter.encode(callback.arguments)
        ).frames()
    }

    func isAppReply(_ requestID: [UInt8]) -> Bool { appTransition?.awaiting?.requestID == requestID }

    /// A host or interceptor answered.
    mutating func handleAppReply(_ reply: ControlReply, now: UInt64, into output: inout [BrokerOutput]) {
        guard var transition = appTransition, let awaiting = transition.awaiting,
            awaiting.requestID == reply.requestID
        else { return }
        transition.awaiting = nil
        let body = (try? reply.json()) ?? .null
        switch transition.stage {
        case .intercepting:
            switch body["action"]?.stringValue ?? "allow" {
            case "refuse":
                let reason = body["reason"]?.stringValue ?? "no reason given"
                transition.failure = (
                    .forbidden,
                    "the start of '\(transition.start?.app ?? "?")' was refused by \(awaiting.service): \(reason)"
                )
            case "change":
                if let app = body["app"]?.stringValue { transition.start?.app = app }
                if let params = body["params"], case .object = params { transition.start?.params = params }
                if let mode = body["mode"]?.stringValue.flatMap(LaunchMode.init(rawValue:)) {
                    transition.start?.mode = mode
                }
                output.append(
                    .log("\(awaiting.service) changed a start request to '\(transition.start?.app ?? "?")'"))
            default: break
            }
        case .vetoing:
            if reply.status.isSuccess && body["allow"]?.boolValue == false, let exit = transition.exit {
                let record = stack.session(exit.session)
                transition.failure = (
                    .conflict,
                    "\(exit.session) (\(record?.app ?? "?")) refused to terminate: its shouldTerminate answered NO"
                )
            } else {
                planExit(&transition, now: now)
            }
        case .delivering:
            let callback = transition.callbacks[transition.next - 1]
            if !reply.status.isSuccess && callback.name != .action {
                output.append(.log("\(awaiting.what) failed: \(reply.errorMessage)"))
            }
            if callback.name == .didCreate, reply.status.isSuccess {
                stack.setRoot(body["root"] ?? .null, of: callback.session)
            }
            if callback.name == .action { transition.actionReply = reply }
        }
        appTransition = transition
        advanceApp(now: now, into: &output)
    }

    /// Callbacks, interceptors and vetoes that were not answered in time: the broker goes on.
    mutating func expireAppCallback(now: UInt64, into output: inout [BrokerOutput]) {
        guard var transition = appTransition, let awaiting = transition.awaiting, awaiting.deadline <= now
        else { return }
        output.append(
            .log(
                "\(awaiting.what) was not answered within \(configuration.appCallbackTimeoutMilliseconds) ms; going on"
            ))
        transition.awaiting = nil
        if transition.stage == .vetoing { planExit(&transition, now: now) }
        if transition.stage == .delivering, transition.callbacks[transition.next - 1].name == .action {
            transition.failure = (
                .timeout,
                "\(awaiting.what) was not answered within \(configuration.appCallbackTimeoutMilliseconds) ms"
            )
        }
        appTransition = transition
        advanceApp(now: now, into: &output)
    }

    /// A host left: a callback it owed counts as answered; its sessions crash (next in line).
    mutating func hostStopped(
        _ registration: ServiceRegistration, now: UInt64, into output: inout [BrokerOutput]
    ) {
        if stack.sessions.contains(where: { $0.host == registration.name && $0.state != .detached }) {
            appQueue.insert(.crash(host: registration.name), at: 0)
        }
        if var transition = appTransition, let awaiting = transition.awaiting,
            awaiting.service == registration.name
        {
            output.append(.log("\(awaiting.what) lost: \(registration.name) went away"))
            transition.awaiting = nil
            if transition.stage == .vetoing { planExit(&transition, now: now) }
            appTransition = transition
            advanceApp(now: now, into: &output)
        } else {
            pumpApps(now: now, into: &output)
        }
    }

    /// A host registered: its restored sessions come back, and the Launcher starts if it offers it.
    mutating func hostRegistered(
        _ registration: ServiceRegistration, now: UInt64, into output: inout [BrokerOutput]
    ) {
        guard !registration.apps.isEmpty else { return }
        if stack.sessions.contains(where: { $0.host == registration.name && $0.state == .detached }) {
            appQueue.append(.attach(host: registration.name))
        }
        if let launcher = configuration.launcherApp, registration.apps.contains(launcher), startsImmediately {
            appQueue.append(.launch)
        }
        pumpApps(now: now, into: &output)
    }

    private mutating func finishApp(
        _ transition: AppTransition, now: UInt64, into output: inout [BrokerOutput]
    ) {
        let outcome = transition.outcome
        if case .launch = transition.operation { launcherStarted(now: now, into: &output) }
        for (record, result, forced) in outcome.exited {
            publishRuntime(
                .appDidExit,
                [
                    "session": .string(record.id), "app": .string(record.app), "forced": .bool(forced),
                    "result": result ?? .null,
                ],
                now: now, into: &output)
        }
        if let started = outcome.started {
            publishRuntime(
                .appDidStart,
                [
                    "session": .string(started.id), "app": .string(started.app),
                    "host": .string(started.host),
                    "mode": .string(started.mode.rawValue),
                    "parent": started.parent.map { .string($0) } ?? .null,
                ], now: now, into: &output)
        }
        if !transition.callbacks.isEmpty || transition.failure == nil {
            output.append(.persist(file: "sessions.json", document: stack.json))
        }
        guard case .request(let request, let peer) = transition.operation else { return }
        if let failure = transition.failure {
            send(
                peer, ControlReply.error(failure.status, failure.message, requestID: request.requestID),
                into: &output)
            return
        }
        if var actionReply = transition.actionReply {
            actionReply.requestID = request.requestID
            send(peer, actionReply, into: &output)
            return
        }
        var body: [String: JSONValue] = ["stack": stackBody]
        if let started = outcome.started { body["session"] = stack.session(started.id)?.json ?? started.json }
        if let resumed = transition.start.flatMap({ stack.newest($0.app) }), outcome.started == nil {
            body["session"] = resumed.json
        }
        if !outcome.exited.isEmpty { body["exited"] = .array(outcome.exited.map { $0.record.json }) }
        send(peer, ControlReply(requestID: request.requestID, json: .object(body)), into: &output)
    }
}
