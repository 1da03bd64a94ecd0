import Synchronization

/// The service name the next actor created in this task takes (``LifelineActorSystem/assignID(_:)``):
/// only the first, so actors the hosted one makes in its init stay local.
final class HostingClaim: Sendable {
    private let name: Mutex<String?>

    init(_ name: String) { self.name = Mutex(name) }

    func take() -> String? {
        name.withLock { name in
            defer { name = nil }; return name
        }
    }
}
