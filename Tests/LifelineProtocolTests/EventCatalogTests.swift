import Testing

@testable import LifelineProtocol

@Suite("Event catalog and naming rule", .timeLimit(.minutes(1)))
struct EventCatalogTests {
    @Test("every lifecycle event of the mPaaS framework is catalogued")
    func completeness() {
        let expected: [EventName] = [
            .didFinishLaunching, .willResignActive, .didEnterBackground, .willEnterForeground,
            .didBecomeActive,
            .willTerminate, .didReceiveMemoryWarning, .openURL, .didReceiveRemoteNotification,
            .didRegisterForRemoteNotifications, .didFailToRegisterForRemoteNotifications,
            .didReceiveLocalNotification,
            .handleActionForLocalNotification, .continueUserActivity, .performActionForShortcutItem,
            .performFetch,
            .handleWatchKitExtensionRequest, .serviceDidStart, .serviceDidStop, .serviceInstanceDidJoin,
            .serviceInstanceDidLeave,
            .beforeDidFinishLaunching,
            .afterDidFinishLaunching, .dispatchDidComplete, .appDidStart, .appDidExit, .appDidCrash,
            .bootDidStart,
            .bootTaskDidFinish, .bootDidFinish, .dispatchDidStep, .callDidFinish,
        ]
        #expect(Set(EventCatalog.names) == Set(expected))
        #expect(EventCatalog.names.count == expected.count)
    }

    @Test(
        "names follow one rule",
        arguments: [
            ("didEnterBackground", nil), ("com.example.cartDidChange", nil), ("_x.y-z", nil),
            ("", "cannot be empty"),
            ("a..b", "empty segment"), ("a.", "ends with a dot"), ("1abc", "must start with a letter"),
            ("a b", "may contain only"), ("a\u{0}b", "may contain only"),
            (String(repeating: "a", count: 201), "at most 200"),
        ] as [(String, String?)])
    func namingRule(name: String, problem: String?) {
        let found = EventName.syntaxProblem(in: name)
        if let problem {
            #expect(found?.contains(problem) == true, "\(found ?? "nil")")
        } else {
            #expect(found == nil)
        }
    }

    @Test("an unknown built-in name is refused with the list of known names")
    func unknownName() {
        let error = #expect(throws: EventValidationError.self) {
            try EventCatalog.validateName("didEnterBackgroun")
        }
        #expect(error?.kind == .unknownEvent)
        #expect(error?.message.contains("didEnterBackground") == true)
        #expect(error?.message.contains("com.example.didEnterBackgroun") == true)
    }

    @Test("custom names are accepted without being catalogued")
    func customNames() throws {
        #expect(try EventCatalog.validateName("shop.cartDidChange").isCustom)
        try EventCatalog.validatePublication("shop.cartDidChange", payload: ["anything": [1, 2]])
    }

    @Test("payloads are checked against the catalogued fields")
    func payloads() throws {
        try EventCatalog.validatePublication(.openURL, payload: ["url": "app://x", "extra": 1])
        #expect(
            throws: EventValidationError(
                kind: .badPayload, message: "openURL needs the field 'url' (the URL to open)")
        ) {
            try EventCatalog.validatePublication(.openURL, payload: [:])
        }
        #expect(
            throws: EventValidationError(
                kind: .badPayload, message: "field 'url' of openURL must be a string, not number")
        ) {
            try EventCatalog.validatePublication(.openURL, payload: ["url": 3])
        }
        #expect(
            throws: EventValidationError(
                kind: .badPayload, message: "the payload of willTerminate must be a JSON object, not array")
        ) {
            try EventCatalog.validatePublication(.willTerminate, payload: [])
        }
    }

    @Test("runtime events cannot be published by clients")
    func reserved() {
        #expect(
            throws: EventValidationError(
                kind: .reserved, message: "serviceDidStart is published by the broker only")
        ) {
            try EventCatalog.validatePublication(.serviceDidStart, payload: ["name": "x"])
        }
    }
}
