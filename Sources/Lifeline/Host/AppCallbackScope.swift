import Synchronization

/// The micro-app callback a task runs for. Stack changes its session asks for meanwhile get ids made
/// from the callback's: the same callback run again (after a broker restart) asks for the same
/// changes, which the broker then does once.
final class AppCallbackScope: Sendable {
    @TaskLocal static var current: AppCallbackScope?

    let callbackID: String
    private let changes = Atomic<Int>(0)

    init(callbackID: String) { self.callbackID = callbackID }

    /// The id of the next change asked for in this callback.
    func nextOperationID() -> String {
        "\(callbackID).\(changes.wrappingAdd(1, ordering: .relaxed).newValue)"
    }
}
