import Glibc
import Synchronization

/// The thread that owns a connection's sockets, so that code can tell whether it runs there (a
/// command posted from that thread needs no wake-up: the thread reads its mailbox before it waits).
final class OwnerThread: Sendable {
    private let owner = Atomic<UInt>(0)

    /// Called by the socket thread when it starts.
    func bindToCurrentThread() { owner.store(UInt(pthread_self()), ordering: .releasing) }

    /// True on the socket thread.
    var isCurrent: Bool { UInt(pthread_self()) == owner.load(ordering: .acquiring) }
}
