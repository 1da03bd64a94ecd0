import Synchronization

/// A flag any thread may raise once.
final class StopFlag: Sendable {
    private let flag = Atomic<Bool>(false)
    func raise() { flag.store(true, ordering: .releasing) }
    var isRaised: Bool { flag.load(ordering: .acquiring) }
}
