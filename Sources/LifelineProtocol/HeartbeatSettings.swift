/// How often a peer heartbeats and how many missed beats make it gone: silent for
/// `interval × liveness` means dead.
package struct HeartbeatSettings: Sendable, Equatable {
    /// 1 s × 3, the defaults of both sides.
    public static let standard = HeartbeatSettings(intervalMilliseconds: 1000, liveness: 3)
    /// Accepted intervals.
    public static let intervalRange = 10...600_000
    /// Accepted liveness counts.
    public static let livenessRange = 1...100

    public var intervalMilliseconds: Int
    public var liveness: Int

    public init(intervalMilliseconds: Int, liveness: Int) {
        self.intervalMilliseconds = intervalMilliseconds
        self.liveness = liveness
    }

    /// How long a peer may stay silent, in nanoseconds.
    public var expiryNanoseconds: UInt64 { UInt64(intervalMilliseconds) * UInt64(liveness) * 1_000_000 }

    /// The interval in nanoseconds.
    public var intervalNanoseconds: UInt64 { UInt64(intervalMilliseconds) * 1_000_000 }

    /// How late, in nanoseconds, a loop whose timers beat every `interval` nanoseconds may run them
    /// before that means its process was not running (stopped, starved): half an interval, at most
    /// 100 ms and at least 20 ms. The broker and the library judge their own absences by it.
    package static func absenceThreshold(interval: UInt64) -> UInt64 {
        max(min(interval / 2, 100_000_000), 20_000_000)
    }
}

extension HeartbeatSettings: WireRecord {
    package static var blank: HeartbeatSettings { .standard }
    package static var recordName: String { "heartbeat" }

    package mutating func visit<Visitor: HeaderVisitor>(_ visitor: inout Visitor) throws(Visitor.Failure) {
        try visitor.field("intervalMs", &intervalMilliseconds, in: Self.intervalRange)
        try visitor.field("liveness", &liveness, in: Self.livenessRange)
    }
}
