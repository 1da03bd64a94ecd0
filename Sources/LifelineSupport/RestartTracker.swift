/// A supervisor's bookkeeping for one child, as OTP's supervisors keep it: each restart waits an
/// exponential backoff with jitter (250 ms, 500 ms, 1 s, … at most 8 s; back to 250 ms once the
/// child has run a whole window), and more than `limit` restarts within `window` means giving up
/// on the child. Times are monotonic nanoseconds, passed in.
public struct RestartTracker: Sendable {
    public enum Decision: Sendable, Equatable {
        /// Start it again after this many milliseconds.
        case restart(afterMilliseconds: Int)
        /// Too many restarts in the window: leave it stopped.
        case giveUp(restarts: Int)
    }

    public let limit: Int
    public let windowNanoseconds: UInt64
    private var restarts: [UInt64] = []
    private var consecutive = 0
    private let jitter: @Sendable () -> Double

    public init(
        limit: Int, windowSeconds: Int,
        jitter: @escaping @Sendable () -> Double = { Double.random(in: 0.8...1.2) }
    ) {
        self.limit = limit
        windowNanoseconds = UInt64(windowSeconds) * 1_000_000_000
        self.jitter = jitter
    }

    /// The child exited at `now` after running `ranNanoseconds`: what to do.
    public mutating func exited(at now: UInt64, ranNanoseconds: UInt64) -> Decision {
        restarts.removeAll { now &- $0 > windowNanoseconds }
        if restarts.count >= limit { return .giveUp(restarts: restarts.count) }
        consecutive = ranNanoseconds >= windowNanoseconds ? 1 : consecutive + 1
        restarts.append(now)
        let base = min(250 << min(consecutive - 1, 10), 8000)
        return .restart(afterMilliseconds: Int(Double(base) * min(1.2, max(0.8, jitter()))))
    }
}
