import LifelineProtocol

/// The micro-app sessions a host process runs: one delegate per session, made by its app's factory
/// when the session is created (or restored) and dropped when it terminates.
actor HostedSessions {
    private var sessions: [String: (delegate: any MicroAppDelegate, session: AppSession)] = [:]
    private let factories: [String: Service.AppFactory]
    private let actions: [String: [String]]
    private let context: ServiceContext
    /// The callbacks run lately, by the broker's id: one delivered again (after a broker restart)
    /// gets the first run's answer instead of running twice.
    private var runs: [String: Task<JSONValue, any Error>] = [:]
    private var runOrder: [String] = []
    static let rememberedRuns = 256

    init(factories: [String: Service.AppFactory], actions: [String: [String]] = [:], context: ServiceContext)
    {
        self.factories = factories
        self.actions = actions
        self.context = context
    }

    /// Runs one callback from the broker and returns the reply body.
    func handle(_ request: AppCallbackRequest) async throws -> JSONValue {
        guard let callbackID = request.callbackID else { return try await run(request) }
        if let earlier = runs[callbackID] { return try await earlier.value }
        let scope = AppCallbackScope(callbackID: callbackID)
        let task = Task {
            try await AppCallbackScope.$current.withValue(scope) { try await self.run(request) }
        }
        runs[callbackID] = task
        runOrder.append(callbackID)
        if runOrder.count > Self.rememberedRuns { runs[runOrder.removeFirst()] = nil }
        return try await task.value
    }

    private func run(_ request: AppCallbackRequest) async throws -> JSONValue {
        let id = request.session
        let arguments = request.arguments
        switch request.callback {
        case .didCreate, .restore:
            if let existing = sessions[id] {
                return ["root": await existing.delegate.rootRoute(existing.session), "restored": false]
            }
            let record = try SessionRecord(json: arguments["record"] ?? .null)
            guard let factory = factories[record.app] else {
                throw ServiceError(.notFound, "this host does not offer the app '\(record.app)'")
            }
            let session = AppSession(
                record: record, context: context,
                router: Router(
                    client: context.client, session: record.id,
                    log: { [context] in context.log("\(record.app) (\(record.id)): \($0)") }))
            let delegate = factory(session)
            sessions[id] = (delegate, session)
            await delegate.didCreate(session)
            return [
                "root": await delegate.rootRoute(session), "restored": .bool(request.callback == .restore),
            ]
        default:
            guard let (delegate, session) = sessions[id] else {
                // Delivered again after this host had dropped it: nothing is left to terminate.
                if request.callback == .willTerminate { return [:] }
                throw ServiceError(.notFound, "no session \(id) in this host")
            }
            switch request.callback {
            case .willStartLaunching:
                await delegate.willStartLaunching(session, options: arguments["options"] ?? .emptyObject)
            case .didFinishLaunching: await delegate.didFinishLaunching(session)
            case .willPause: await delegate.willPause(session)
            case .willResume:
                await delegate.willResume(session, options: arguments["options"] ?? .emptyObject)
            case .didResume: await delegate.didResume(session, options: arguments["options"] ?? .emptyObject)
            case .willTerminate:
                await delegate.willTerminate(session, animated: arguments["animated"]?.boolValue ?? true)
                sessions[id] = nil
            case .shouldTerminate: return ["allow": .bool(await delegate.shouldTerminate(session))]
            case .childDidFinish:
                let child = try SessionRecord(json: arguments["child"] ?? .null)
                await delegate.childDidFinish(session, child: child, result: arguments["result"] ?? .null)
            case .action:
                let action = arguments["action"]?.stringValue ?? ""
                if let known = actions[session.app], !known.contains(action) {
                    throw ServiceError(
                        .notFound,
                        "the app '\(session.app)' (session \(id)) has no action '\(action)'; it answers: \(known.isEmpty ? "none" : known.joined(separator: ", "))"
                    )
                }
                return try await delegate.perform(
                    session, action: arguments["action"]?.stringValue ?? "", body: arguments["body"] ?? .null)
            case .didCreate, .restore: break
            }
            return [:]
        }
    }
}
