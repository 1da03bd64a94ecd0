import LifelineProtocol

/// What a boot task's body and its `canExecute` check get.
public struct BootContext: Sendable {
    /// The task's full name (`service.task`).
    public let task: String
    /// The launch options of the didFinishLaunching that started the boot.
    public let launchOptions: JSONValue
    /// Calls, publishing and lookups through the service's connection.
    public let service: ServiceContext
}
