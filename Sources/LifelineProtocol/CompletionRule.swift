/// How the completions of the services that handle a completion-carrying event combine into the one
/// completion the caller receives (exactly once).
package enum CompletionRule: String, Sendable, CaseIterable {
    /// performFetch, didReceiveRemoteNotification: `newData` if any service returned newData, else
    /// `failed` if any failed (a service that missed its deadline or died counts as failed), else
    /// `noData` (also when nobody handles it).
    case fetchResult
    /// performActionForShortcutItem: `true` if any service succeeded, else `false`.
    case succeeded
    /// handleActionForLocalNotification: completes once every service is done (`null`).
    case done
    /// handleWatchKitExtensionRequest: the services' reply objects merged in dispatch order (later
    /// keys win); `{}` when nobody answers.
    case reply

    /// Combines the completions of the services that answered, in dispatch order; `failures` counts
    /// services that missed their deadline, died or failed.
    public func combine(_ answers: [JSONValue?], failures: Int) -> JSONValue {
        switch self {
        case .fetchResult:
            let values = answers.compactMap { $0?.stringValue }
            if values.contains("newData") { return "newData" }
            if failures > 0 || values.contains("failed") { return "failed" }
            return "noData"
        case .succeeded: return .bool(answers.contains { $0?.boolValue == true })
        case .done: return .null
        case .reply:
            var merged: [String: JSONValue] = [:]
            for answer in answers {
                for (key, value) in answer?.objectValue ?? [:] { merged[key] = value }
            }
            return .object(merged)
        }
    }
}

/// A service's answer to a dispatched event (mPaaS's DTFrameworkCallbackResult).
public enum CallbackResult: String, Sendable, CaseIterable {
    /// Not decided here: offer the event to the next service.
    case `continue`
    /// Fully handled: stop the chain (BOOL callbacks return YES).
    case `return`
    /// Return YES to the system at once; stop the chain.
    case returnYES
    /// Return NO to the system at once; stop the chain.
    case returnNO

    /// The value returned to the system when this answer ends the chain.
    public var returnValue: Bool? {
        switch self {
        case .continue: nil
        case .return, .returnYES: true
        case .returnNO: false
        }
    }
}
