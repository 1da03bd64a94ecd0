/// One payload field of a catalogued event.
package struct EventField: Sendable, Hashable {
    /// The JSON type a field's value must have.
    public enum Kind: String, Sendable {
        case string, object, bool, number, any
    }

    public let name: String
    public let kind: Kind
    public let isRequired: Bool
    public let summary: String

    public init(_ name: String, _ kind: Kind, required: Bool = false, _ summary: String) {
        self.name = name
        self.kind = kind
        self.isRequired = required
        self.summary = summary
    }

    func accepts(_ value: JSONValue) -> Bool {
        switch (kind, value) {
        case (.any, _), (.string, .string), (.object, .object), (.bool, .bool), (.number, .int),
            (.number, .double):
            true
        default: false
        }
    }
}

/// What the catalog knows about one built-in event.
package struct EventDescriptor: Sendable {
    /// Who may publish the event.
    public enum Origin: String, Sendable {
        /// Published by clients (the application side).
        case application
        /// Published by the broker only.
        case runtime
    }

    public let name: EventName
    public let origin: Origin
    /// The UIApplicationDelegate / mPaaS callback this event stands for.
    public let counterpart: String
    public let fields: [EventField]
    /// For callbacks that return a BOOL to the system: the value when no service decides.
    public let defaultReturn: Bool?
    /// For callbacks with a completion handler: how the services' completions combine.
    public let completion: CompletionRule?
    /// The deadline of a dispatch step (or of the whole completion), when it differs from the default.
    public let deadlineMilliseconds: Int?
    /// Published events of this name wait for every subscriber's acknowledgement.
    public let requiresAcknowledgement: Bool

    public init(
        _ name: EventName, origin: Origin = .application, _ counterpart: String, _ fields: [EventField] = [],
        returns defaultReturn: Bool? = nil, completion: CompletionRule? = nil, deadline: Int? = nil,
        acknowledged: Bool = false
    ) {
        self.name = name
        self.origin = origin
        self.counterpart = counterpart
        self.fields = fields
        self.defaultReturn = defaultReturn
        self.completion = completion
        self.deadlineMilliseconds = deadline
        self.requiresAcknowledgement = acknowledged
    }
}

/// Why an event name or payload was refused.
public struct EventValidationError: Error, Sendable, Equatable, CustomStringConvertible {
    public enum Kind: Sendable, Equatable {
        case badName, unknownEvent, reserved, badPayload
    }

    public let kind: Kind
    public let message: String

    public var description: String { message }
}

/// The built-in lifecycle events (SEEDS.md §000) and the runtime's own, with their payload fields.
package enum EventCatalog {
    /// Every built-in event, application events first.
    public static let all: [EventDescriptor] = [
        EventDescriptor(
            .didFinishLaunching, "application:didFinishLaunchingWithOptions:",
            [EventField("launchOptions", .object, "launch options (URL, notification, shortcut item)")],
            returns: true),
        EventDescriptor(
            .beforeDidFinishLaunching,
            "beforeDidFinishLaunchingWithOptions: (first phase of a dispatched didFinishLaunching)",
            [EventField("launchOptions", .object, "launch options")]),
        EventDescriptor(
            .afterDidFinishLaunching,
            "afterDidFinishLaunchingWithOptions: (last phase of a dispatched didFinishLaunching)",
            [EventField("launchOptions", .object, "launch options")]),
        EventDescriptor(.willResignActive, "applicationWillResignActive:", acknowledged: true),
        EventDescriptor(.didEnterBackground, "applicationDidEnterBackground:", acknowledged: true),
        EventDescriptor(.willEnterForeground, "applicationWillEnterForeground:"),
        EventDescriptor(.didBecomeActive, "applicationDidBecomeActive:"),
        EventDescriptor(.willTerminate, "applicationWillTerminate:", acknowledged: true),
        EventDescriptor(.didReceiveMemoryWarning, "applicationDidReceiveMemoryWarning:", acknowledged: true),
        EventDescriptor(
            .openURL, "application:openURL:sourceApplication:annotation:",
            [
                EventField("url", .string, required: true, "the URL to open"),
                EventField("sourceApplication", .string, "bundle id of the app that asked"),
                EventField("annotation", .any, "property list from the source app"),
            ], returns: false),
        EventDescriptor(
            .didReceiveRemoteNotification, "application:didReceiveRemoteNotification:fetchCompletionHandler:",
            [EventField("userInfo", .object, required: true, "the notification payload")],
            completion: .fetchResult, deadline: 30_000),
        EventDescriptor(
            .didRegisterForRemoteNotifications,
            "application:didRegisterForRemoteNotificationsWithDeviceToken:",
            [EventField("deviceToken", .string, required: true, "the APNs device token, hex")]),
        EventDescriptor(
            .didFailToRegisterForRemoteNotifications,
            "application:didFailToRegisterForRemoteNotificationsWithError:",
            [EventField("error", .string, required: true, "why registration failed")]),
        EventDescriptor(
            .didReceiveLocalNotification, "application:didReceiveLocalNotification:",
            [EventField("notification", .object, required: true, "the local notification")]),
        EventDescriptor(
            .handleActionForLocalNotification,
            "application:handleActionWithIdentifier:forLocalNotification:completionHandler:",
            [
                EventField("identifier", .string, required: true, "the action identifier"),
                EventField("notification", .object, "the local notification"),
            ], completion: .done),
        EventDescriptor(
            .continueUserActivity, "application:continueUserActivity:restorationHandler:",
            [
                EventField("activityType", .string, required: true, "the NSUserActivity type"),
                EventField("userInfo", .object, "the activity's user info"),
            ], returns: false),
        EventDescriptor(
            .performActionForShortcutItem, "application:performActionForShortcutItem:completionHandler:",
            [
                EventField("type", .string, required: true, "the shortcut item type"),
                EventField("url", .string, "the URL the item opens"),
                EventField("userInfo", .object, "the item's user info"),
            ], completion: .succeeded),
        EventDescriptor(
            .performFetch, "application:performFetchWithCompletionHandler:", completion: .fetchResult,
            deadline: 30_000),
        EventDescriptor(
            .handleWatchKitExtensionRequest, "application:handleWatchKitExtensionRequest:reply:",
            [EventField("userInfo", .object, "the request from the watch")], completion: .reply),
        EventDescriptor(
            .serviceDidStart, origin: .runtime, "a service registered with the broker",
            [
                EventField("name", .string, required: true, "the service"),
                EventField("pid", .number, required: true, "its process id"),
                EventField("host", .string, required: true, "its host"),
            ]),
        EventDescriptor(
            .serviceDidStop, origin: .runtime, "a service unregistered or stopped answering",
            [
                EventField("name", .string, required: true, "the service"),
                EventField("reason", .string, required: true, "unregistered or expired"),
            ]),
        EventDescriptor(
            .serviceInstanceDidJoin, origin: .runtime, "an instance of a replicable service registered",
            [
                EventField("name", .string, required: true, "the service"),
                EventField("instance", .string, required: true, "the instance's id"),
                EventField("pid", .number, required: true, "its process id"),
                EventField("host", .string, required: true, "its host"),
                EventField("instances", .number, required: true, "how many instances the service has now"),
            ]),
        EventDescriptor(
            .serviceInstanceDidLeave, origin: .runtime,
            "an instance of a replicable service unregistered or stopped answering",
            [
                EventField("name", .string, required: true, "the service"),
                EventField("instance", .string, required: true, "the instance's id"),
                EventField("pid", .number, required: true, "its process id"),
                EventField("host", .string, required: true, "its host"),
                EventField("reason", .string, required: true, "unregistered, expired or revoked"),
                EventField("instances", .number, required: true, "how many instances the service has now"),
            ]),
        EventDescriptor(
            .dispatchDidComplete, origin: .runtime, "a dispatched event finished its chain",
            [
                EventField("event", .string, required: true, "the dispatched event"),
                EventField("dispatch", .number, required: true, "the dispatch's id"),
                EventField("result", .string, required: true, "continue, return, returnYES or returnNO"),
                EventField(
                    "decidedBy", .any, required: true, "the service whose answer ended the chain, or null"),
            ]),
        EventDescriptor(
            .dispatchDidStep, origin: .runtime,
            "one service answered a dispatch step (while a TRACE lease is held)",
            [
                EventField("dispatch", .number, required: true, "the dispatch's id"),
                EventField("event", .string, required: true, "the dispatched event"),
                EventField("service", .string, required: true, "the service offered it"),
                EventField("status", .string, required: true, "answered, error or timeout"),
                EventField("durationMs", .number, required: true, "how long the step took"),
            ]),
        EventDescriptor(
            .callDidFinish, origin: .runtime,
            "a call through the broker was answered or timed out (while a TRACE lease is held)",
            [
                EventField("service", .string, required: true, "the service called"),
                EventField("method", .string, required: true, "the method"),
                EventField("status", .number, required: true, "the answer's status (504 when it timed out)"),
                EventField("durationMs", .number, required: true, "forward to answer"),
            ]),
        EventDescriptor(
            .appDidStart, origin: .runtime, "a micro-app session started (DTContext startApplication)",
            [
                EventField("session", .string, required: true, "the session id"),
                EventField("app", .string, required: true, "the app"),
                EventField("host", .string, required: true, "the host service"),
                EventField("mode", .string, required: true, "the launch mode"),
                EventField("parent", .any, required: true, "the parent session or null"),
                EventField("instance", .string, "the host's instance, when it runs several"),
            ]),
        EventDescriptor(
            .appDidExit, origin: .runtime, "a micro-app session left the stack",
            [
                EventField("session", .string, required: true, "the session id"),
                EventField("app", .string, required: true, "the app"),
                EventField("forced", .bool, required: true, "exited by force"),
                EventField("result", .any, required: true, "the result it finished with, or null"),
            ]),
        EventDescriptor(
            .appDidCrash, origin: .runtime, "a micro-app session was lost with its host process",
            [
                EventField("session", .string, required: true, "the session id"),
                EventField("app", .string, required: true, "the app"),
                EventField("host", .string, required: true, "the host that died"),
                EventField("instance", .string, "the instance that died, when the host runs several"),
            ]),
        EventDescriptor(
            .bootDidStart, origin: .runtime, "the boot loader started",
            [
                EventField("boot", .number, required: true, "the boot's number"),
                EventField("tasks", .number, required: true, "how many tasks it plans"),
            ]),
        EventDescriptor(
            .bootTaskDidFinish, origin: .runtime, "a boot task finished",
            [
                EventField("boot", .number, required: true, "the boot's number"),
                EventField("task", .string, required: true, "the task"),
                EventField("service", .string, required: true, "the service that declared it"),
                EventField("phase", .string, required: true, "its phase"),
                EventField("outcome", .string, required: true, "done, skipped or failed"),
                EventField("reason", .any, required: true, "why, when not done; else null"),
                EventField("durationMs", .number, required: true, "how long it ran"),
            ]),
        EventDescriptor(
            .bootDidFinish, origin: .runtime, "the boot loader finished",
            [
                EventField("boot", .number, required: true, "the boot's number"),
                EventField("outcome", .string, required: true, "done, failed or refused"),
                EventField("error", .any, required: true, "what stopped it, or null"),
                EventField("durationMs", .number, "how long it ran (absent when refused)"),
            ]),
    ]

    /// Events that are phases of a dispatched didFinishLaunching and cannot be sent on their own.
    public static let launchPhases: [EventName] = [.beforeDidFinishLaunching, .afterDidFinishLaunching]

    private static let byName: [EventName: EventDescriptor] = Dictionary(
        uniqueKeysWithValues: all.map { ($0.name, $0) })

    /// The descriptor of a built-in event, or nil.
    public static func descriptor(for name: EventName) -> EventDescriptor? {
        name.isCustom ? nil : byName[name]
    }

    /// Every built-in name, in catalog order.
    public static var names: [EventName] { all.map(\.name) }

    /// Checks that `text` names an event a subscriber may ask for: a built-in event or a custom name.
    public static func validateName(_ text: String) throws(EventValidationError) -> EventName {
        if let problem = EventName.syntaxProblem(in: text) {
            throw EventValidationError(kind: .badName, message: problem)
        }
        let name = EventName(rawValue: text)
        if !name.isCustom && byName[name] == nil {
            let known = names.map(\.rawValue).joined(separator: ", ")
            let guess = Suggestion.phrase(for: text, in: names.map(\.rawValue))
            throw EventValidationError(
                kind: .unknownEvent,
                message:
                    "unknown event '\(text)'\(guess) (a custom event needs a namespace, e.g. 'com.example.\(text)'; "
                    + "built-in events: \(known))")
        }
        return name
    }

    /// Checks that a client may publish `name` with `payload`: the name is valid, not reserved for the
    /// runtime, the payload is an object, and the catalogued fields are present with the right types.
    public static func validatePublication(_ name: EventName, payload: JSONValue) throws(EventValidationError)
    {
        _ = try validateName(name.rawValue)
        if let descriptor = byName[name], descriptor.origin == .runtime {
            throw EventValidationError(kind: .reserved, message: "\(name) is published by the broker only")
        }
        if launchPhases.contains(name) {
            throw EventValidationError(
                kind: .reserved,
                message: "\(name) is a phase of didFinishLaunching; dispatch didFinishLaunching instead")
        }
        try validatePayload(payload, for: name)
    }

    /// Checks the payload of `name` against its catalogued fields (custom events: any object).
    public static func validatePayload(_ payload: JSONValue, for name: EventName) throws(EventValidationError)
    {
        guard case .object(let members) = payload else {
            throw EventValidationError(
                kind: .badPayload,
                message: "the payload of \(name) must be a JSON object, not \(payload.typeName)")
        }
        guard let descriptor = byName[name] else { return }
        for field in descriptor.fields {
            guard let value = members[field.name] else {
                if field.isRequired {
                    throw EventValidationError(
                        kind: .badPayload,
                        message: "\(name) needs the field '\(field.name)' (\(field.summary))")
                }
                continue
            }
            if !field.accepts(value) {
                throw EventValidationError(
                    kind: .badPayload,
                    message:
                        "field '\(field.name)' of \(name) must be \(field.kind.rawValue.first.map { "aeiou".contains($0) } == true ? "an" : "a") \(field.kind.rawValue), not \(value.typeName)"
                )
            }
        }
    }
}
