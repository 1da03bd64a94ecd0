import Synchronization

/// Where the connection reads the actor keys a service holds when it registers: set once the
/// service's keyed actors are hosted, empty before.
final class HeldKeysSource: Sendable {
    private let source = Mutex<(@Sendable () -> [String])?>(nil)

    func set(_ keys: @escaping @Sendable () -> [String]) { source.withLock { $0 = keys } }

    func keys() -> [String] { source.withLock { $0 }?() ?? [] }
}
