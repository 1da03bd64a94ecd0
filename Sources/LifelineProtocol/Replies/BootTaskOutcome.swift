/// A service's answer to a BOOT run: the task ran, or its condition skipped it.
package enum BootTaskOutcome: Sendable, Equatable {
    case done
    case skipped(reason: String)

    /// Reads the reply body; anything but a skip (even unreadable text) is `done`.
    package init(bytes: [UInt8]) {
        let record = (try? Record(bytes: bytes)) ?? .blank
        if record.outcome == "skipped" {
            self = .skipped(reason: record.reason ?? "skipped by the service")
        } else {
            self = .done
        }
    }

    /// The reply body.
    package var bytes: [UInt8] {
        switch self {
        case .done: Record(outcome: "done").bytes
        case .skipped(let reason): Record(outcome: "skipped", reason: reason).bytes
        }
    }

    /// The reply's fields, declared once: `{"outcome": "done" | "skipped", "reason"?}`.
    struct Record: WireRecord, Equatable {
        var outcome: String?
        var reason: String?

        static let blank = Record()
        static let recordName = "the BOOT run's reply"

        mutating func visit<Visitor: HeaderVisitor>(_ visitor: inout Visitor) throws(Visitor.Failure) {
            try visitor.field("outcome", tolerant: &outcome)
            try visitor.field("reason", tolerant: &reason)
        }
    }
}
