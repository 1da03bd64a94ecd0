import Foundation

/// A reproducible source of random numbers for property tests (SplitMix64). The seed comes from
/// `LIFELINE_TEST_SEED` when it is set, so a failure printed with its seed can be replayed:
/// `LIFELINE_TEST_SEED=1234 swift test --filter …`.
public struct SeededGenerator: RandomNumberGenerator {
    public let seed: UInt64
    private var state: UInt64

    public init(seed: UInt64? = nil) {
        let chosen =
            seed ?? ProcessInfo.processInfo.environment["LIFELINE_TEST_SEED"].flatMap { UInt64($0) }
            ?? UInt64.random(in: .min ... .max)
        self.seed = chosen
        state = chosen
    }

    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var value = state
        value = (value ^ (value >> 30)) &* 0xBF58_476D_1CE4_E5B9
        value = (value ^ (value >> 27)) &* 0x94D0_49BB_1331_11EB
        return value ^ (value >> 31)
    }

    /// How to replay a failure.
    public var replay: String { "replay with LIFELINE_TEST_SEED=\(seed)" }
}
