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

    public var json: JSONValue {
        ["intervalMs": .int(Int64(intervalMilliseconds)), "liveness": .int(Int64(liveness))]
    }

    /// Reads `{"intervalMs": N, "liveness": N}`, checking the ranges.
    public init(json: JSONValue) throws(ProtocolError) {
        guard let interval = json["intervalMs"]?.intValue, let liveness = json["liveness"]?.intValue else {
            throw ProtocolError(.badRequest, "heartbeat needs integer fields intervalMs and liveness")
        }
        guard HeartbeatSettings.intervalRange.contains(Int(interval)) else {
            throw ProtocolError(
                .badRequest,
                "heartbeat intervalMs must be within \(HeartbeatSettings.intervalRange), got \(interval)")
        }
        guard HeartbeatSettings.livenessRange.contains(Int(liveness)) else {
            throw ProtocolError(
                .badRequest,
                "heartbeat liveness must be within \(HeartbeatSettings.livenessRange), got \(liveness)")
        }
        self.init(intervalMilliseconds: Int(interval), liveness: Int(liveness))
    }
}
