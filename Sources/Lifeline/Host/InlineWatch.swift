import LifelineProtocol
import LifelineSupport
import Synchronization

/// Which inline handler holds the socket thread now, and since when. The socket thread also sends
/// the heartbeats: the runner asks ``overdue(after:)`` every so often and logs a handler that has
/// run past the heartbeat interval, by name, so a blocking inline handler is reported rather than
/// silently expiring the service.
final class InlineWatch: Sendable {
    /// An inline handler, as the log names it.
    enum Handler: Sendable, CustomStringConvertible {
        case event(EventName)
        /// The handler of `count` events of one name, run one after the other (a bus message's).
        case events(EventName, count: Int)
        case method(service: String, method: String)

        var description: String {
            switch self {
            case .event(let name): "the inline handler of event \(name.rawValue)"
            case .events(let name, let count):
                "the inline handler of event \(name.rawValue) (\(count) events in a row)"
            case .method(let service, let method): "the inline method \(service).\(method)"
            }
        }
    }

    private struct Running {
        let what: Handler
        let since: UInt64
        var reported = false
    }

    private let running = Mutex<Running?>(nil)

    /// Runs the inline handler `what` on the socket thread; one that ran past the heartbeat interval
    /// (reported meanwhile by ``overdue(after:)``) is logged with `log` once it returns.
    func run<T>(_ what: Handler, log: (String) -> Void, _ body: () throws -> T) rethrows -> T {
        let started = Running(what: what, since: SystemClock.monotonicNanoseconds())
        running.withLock { $0 = started }
        defer {
            let ended = running.withLock { state -> Running? in
                defer { state = nil }
                return state
            }
            if let ended, ended.reported {
                let milliseconds = (SystemClock.monotonicNanoseconds() &- ended.since) / 1_000_000
                log("\(ended.what) returned after \(milliseconds) ms on the socket thread")
            }
        }
        return try body()
    }

    /// The handler running for longer than `limit` and not reported yet (it is reported from now on),
    /// with how long it has run (ms).
    func overdue(after limit: Duration) -> (what: Handler, milliseconds: UInt64)? {
        let now = SystemClock.monotonicNanoseconds()
        return running.withLock { state -> (Handler, UInt64)? in
            guard let current = state, !current.reported, now &- current.since > limit.wholeNanoseconds
            else { return nil }
            state?.reported = true
            return (current.what, (now &- current.since) / 1_000_000)
        }
    }
}
