/// A service's answer to a BOOT run: the task ran, or its condition skipped it.
package enum BootTaskOutcome: Sendable, Equatable {
    case done
    case skipped(reason: String)

    public init(json: JSONValue) {
        if json["outcome"]?.stringValue == "skipped" {
            self = .skipped(reason: json["reason"]?.stringValue ?? "skipped by the service")
        } else {
            self = .done
        }
    }

    public var json: JSONValue {
        switch self {
        case .done: ["outcome": "done"]
        case .skipped(let reason): ["outcome": "skipped", "reason": .string(reason)]
        }
    }
}
