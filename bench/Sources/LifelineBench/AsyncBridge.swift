import Dispatch
import LifelineSupport
import Synchronization

/// Runs async code from the driver's thread (never a thread of the Swift pool) and waits for it.
enum AsyncBridge {
    private final class Outcome<Value: Sendable>: Sendable {
        let result = Mutex<Result<Value, any Error>?>(nil)
    }

    static func run<Value: Sendable>(_ body: @escaping @Sendable () async throws -> Value) throws -> Value {
        let outcome = Outcome<Value>()
        let done = DispatchSemaphore(value: 0)
        Task {
            let result: Result<Value, any Error>
            do {
                result = .success(try await body())
            } catch {
                result = .failure(error)
            }
            outcome.result.withLock { $0 = result }
            done.signal()
        }
        done.wait()
        return try outcome.result.withLock { $0! }.get()
    }

    static func run(_ body: @escaping @Sendable () async -> Void) {
        let done = DispatchSemaphore(value: 0)
        Task {
            await body()
            done.signal()
        }
        done.wait()
    }
}

/// Round-trip samples taken inside async code: each one timed around `body` in the calling task.
enum AsyncSamples {
    static func take(_ count: Int, _ body: () async throws -> Void) async throws -> [UInt64] {
        var samples: [UInt64] = []
        samples.reserveCapacity(count)
        for _ in 0..<count {
            let start = SystemClock.monotonicNanoseconds()
            try await body()
            samples.append(SystemClock.monotonicNanoseconds() - start)
        }
        return samples
    }
}

/// Numbers the async rows' publications (their publish ids must not repeat).
final class PublicationCounter: Sendable {
    private let count = Mutex(0)

    func next() -> Int {
        count.withLock {
            $0 += 1
            return $0
        }
    }
}

/// The two legs of each "lifeline async (legs)" sample.
final class LegRecorder: Sendable {
    private let recorded = Mutex<[[UInt64]]>([[], []])

    var legs: [[UInt64]] { recorded.withLock { $0 } }

    func record(_ first: UInt64, _ second: UInt64) {
        recorded.withLock {
            $0[0].append(first)
            $0[1].append(second)
        }
    }

    func reset() { recorded.withLock { $0 = [[], []] } }
}
