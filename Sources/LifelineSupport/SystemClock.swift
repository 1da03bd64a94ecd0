import Glibc
import LifelineProtocol

/// The clocks the runtime reads: monotonic for timers and latency, wall for display.
public enum SystemClock {
    /// CLOCK_MONOTONIC in nanoseconds: one clock for every process on the host.
    @inline(__always)
    public static func monotonicNanoseconds() -> UInt64 {
        var spec = timespec()
        clock_gettime(CLOCK_MONOTONIC, &spec)
        return UInt64(spec.tv_sec) &* 1_000_000_000 &+ UInt64(spec.tv_nsec)
    }

    /// The current instant of CLOCK_MONOTONIC.
    @inline(__always)
    package static var now: MonotonicInstant { MonotonicInstant(nanoseconds: monotonicNanoseconds()) }

    /// CLOCK_REALTIME in nanoseconds since 1970.
    public static func wallNanoseconds() -> UInt64 {
        var spec = timespec()
        clock_gettime(CLOCK_REALTIME, &spec)
        return UInt64(spec.tv_sec) &* 1_000_000_000 &+ UInt64(spec.tv_nsec)
    }

    /// Milliseconds from `now` until `deadline` for a poll timeout, rounded up; 0 when due.
    public static func pollTimeout(until deadline: UInt64, now: UInt64) -> Int {
        guard deadline > now else { return 0 }
        let milliseconds = (deadline - now + 999_999) / 1_000_000
        return Int(min(milliseconds, 60_000))
    }
}
