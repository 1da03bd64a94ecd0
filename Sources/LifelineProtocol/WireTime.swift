/// A point on the host's monotonic clock (CLOCK_MONOTONIC): what every timer and deadline of the
/// runtime is measured on. Comparable across processes of one host only.
package struct MonotonicInstant: Comparable, Hashable, Sendable, CustomStringConvertible {
    /// Nanoseconds since the clock's origin.
    package var nanoseconds: UInt64

    package init(nanoseconds: UInt64) { self.nanoseconds = nanoseconds }

    /// The instant `duration` after this one (durations below zero count as zero).
    package static func + (instant: MonotonicInstant, duration: Duration) -> MonotonicInstant {
        MonotonicInstant(nanoseconds: instant.nanoseconds &+ duration.wholeNanoseconds)
    }

    /// How long from `earlier` to `later` (zero when `earlier` is not before `later`).
    package static func - (later: MonotonicInstant, earlier: MonotonicInstant) -> Duration {
        later > earlier ? .nanoseconds(Int64(later.nanoseconds - earlier.nanoseconds)) : .zero
    }

    package static func < (lhs: MonotonicInstant, rhs: MonotonicInstant) -> Bool {
        lhs.nanoseconds < rhs.nanoseconds
    }

    package var description: String { "\(nanoseconds) ns" }
}

extension Duration {
    /// The duration in whole milliseconds, rounded down: the unit the wire protocol speaks.
    package var wholeMilliseconds: Int {
        let (seconds, attoseconds) = components
        return Int(seconds * 1000 + attoseconds / 1_000_000_000_000_000)
    }

    /// The duration in whole nanoseconds, rounded down; zero for a negative duration.
    package var wholeNanoseconds: UInt64 {
        let (seconds, attoseconds) = components
        guard seconds >= 0 && attoseconds >= 0 else { return 0 }
        return UInt64(seconds) &* 1_000_000_000 &+ UInt64(attoseconds / 1_000_000_000)
    }
}
