import Dispatch
import Glibc

/// Turns SIGINT / SIGTERM into a callback instead of an abrupt exit.
package final class SignalWatcher: @unchecked Sendable {
    // Dispatch sources are thread-safe; they are only kept alive here.
    private let sources: [any DispatchSourceSignal]

    /// Calls `handler` with the signal number whenever one of `signals` arrives.
    package init(_ signals: [Int32] = [SIGINT, SIGTERM], handler: @escaping @Sendable (Int32) -> Void) {
        sources = signals.map { number in
            signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
            source.setEventHandler { handler(number) }
            source.resume()
            return source
        }
    }

    deinit { for source in sources { source.cancel() } }
}
